import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleUser } from '../db/console.repository.js';

/** What the console app lends the single sign-on routes: cookie security, the sign-in step, the audit. */
export interface OidcHelpers {
  secureCookies(request: FastifyRequest): boolean;
  signIn(request: FastifyRequest, reply: FastifyReply, user: ConsoleUser): Promise<FastifyReply>;
  audit(request: FastifyRequest, action: string, outcome: 'ok' | 'refused' | 'failed', target?: string, detail?: unknown): Promise<void>;
}

/** Single sign-on through OpenID Connect: registers /auth/oidc and its callback on the console. */
export interface OidcSignIn {
  register(app: FastifyInstance, helpers: OidcHelpers): void;
}
