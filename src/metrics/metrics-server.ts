import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.types.js';
import { ConfigError, describeError, ReconError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

export interface HealthCheck {
  ok: boolean;
  checks: { scheduler: string; database: string };
}

/** Alive when the scheduler loop runs and the database answers a query. */
export async function checkHealth(db: Kysely<Database>, schedulerAlive: () => boolean): Promise<HealthCheck> {
  const scheduler = schedulerAlive() ? 'ok' : 'stopped';
  let database = 'ok';
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    database = describeError(error);
  }
  return { ok: scheduler === 'ok' && database === 'ok', checks: { scheduler, database } };
}

export interface MetricsServer {
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Why the metrics port could not be had. A port in use (a second worker on the same host) or an
 * address not of this machine is a setting to change, so a configuration error (exit 2) naming it.
 */
function listenError(host: string, port: number, error: NodeJS.ErrnoException): ReconError {
  if (error.code === 'EADDRINUSE') {
    return new ConfigError(
      `RECON_METRICS_PORT: port ${port} on ${host} is already in use (another worker on this host?). Give each worker on a host its own RECON_METRICS_PORT, or leave it unset for no metrics endpoint.`,
      [],
      { cause: error },
    );
  }
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EACCES') {
    return new ConfigError(
      `RECON_METRICS_HOST/RECON_METRICS_PORT: cannot serve metrics on ${host}:${port} (${error.code}). Set RECON_METRICS_HOST to an address of this machine and RECON_METRICS_PORT to a port this user may bind.`,
      [],
      { cause: error },
    );
  }
  return new ReconError(`Could not serve metrics on ${host}:${port} (${error.code ?? error.message}). Set RECON_METRICS_PORT to a free port, or RECON_METRICS_HOST to an address of this machine.`, { cause: error });
}

/**
 * Serves `/metrics` (Prometheus text format) and `/healthz` (200 alive, 503 not, with a JSON
 * body saying which check failed). Bound to one host: 127.0.0.1 unless configured otherwise.
 */
export async function startMetricsServer(options: { host: string; port: number; metrics: Metrics; health: () => Promise<HealthCheck>; logger: Logger }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const answer = async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
      } else if (path === '/metrics') {
        const text = await options.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': options.metrics.registry.contentType }).end(text);
      } else if (path === '/healthz') {
        const health = await options.health();
        res.writeHead(health.ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(health));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics or /healthz\n');
      }
    };
    answer().catch((error: unknown) => {
      options.logger.warn({ err: error, path }, 'the metrics endpoint failed to answer');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(options.host, options.port, error)));
    server.listen(options.port, options.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
