import type { AppContext } from '../app-context.js';
import { ConfigError } from '../errors.js';
import { buildConsoleApp } from './console-app.js';
import type { OidcSignIn } from './oidc.js';

export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

/** Builds the console from the configuration (public URL, trusted proxies, single sign-on) and listens. */
export async function startConsole(ctx: AppContext, listen: { host: string; port: number }): Promise<RunningConsole> {
  const settings = ctx.config.console;
  const publicUrl = settings.publicUrl === undefined ? undefined : new URL(settings.publicUrl);
  let oidc: OidcSignIn | undefined;
  if (settings.oidc !== undefined) {
    const { createOidcSignIn } = await import('./oidc-client.js');
    oidc = await createOidcSignIn(ctx, settings.oidc, publicUrl);
  }
  const app = await buildConsoleApp({ ctx, publicUrl, trustProxy: settings.trustProxy, oidc, listenHost: listen.host });
  try {
    await app.listen({ host: listen.host, port: listen.port });
  } catch (error) {
    await app.close();
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`Port ${listen.port} on ${listen.host} is already in use: choose another with --port.`, [], { cause: error });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`Cannot listen on --host ${listen.host}: no such address on this machine.`, [], { cause: error });
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : listen.port;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  ctx.logger.info({ url: `http://${host}:${port}/`, publicUrl: publicUrl?.href }, 'the review console listens');
  return { url: `http://${host}:${port}/`, close: () => app.close() };
}
