import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageContext } from './pages.js';

// Post-redirect-get: an action answers with a redirect, and what it did (or why it was refused)
// travels to the page the browser then loads in a short-lived cookie read once. A refresh of
// that page reloads it; it never sends the form again.

const NOTICE_COOKIE = 'recon_notice';

/** Keeps the notice for the next page this browser loads. */
export function setFlashNotice(reply: FastifyReply, notice: NonNullable<PageContext['notice']>, secure: boolean): void {
  reply.setCookie(NOTICE_COOKIE, JSON.stringify({ kind: notice.kind, text: notice.text.slice(0, 1000) }), { path: '/', httpOnly: true, sameSite: 'strict', secure, maxAge: 60 });
}

/** The notice left by the previous action, once: it is cleared as it is read. */
export function takeFlashNotice(request: FastifyRequest, reply: FastifyReply): PageContext['notice'] {
  const raw = request.cookies[NOTICE_COOKIE];
  if (raw === undefined) return undefined;
  reply.clearCookie(NOTICE_COOKIE, { path: '/' });
  try {
    const value = JSON.parse(raw) as { kind?: unknown; text?: unknown };
    if ((value.kind === 'ok' || value.kind === 'error') && typeof value.text === 'string') return { kind: value.kind, text: value.text };
  } catch {
    // A cookie this console did not write: nothing to show.
  }
  return undefined;
}
