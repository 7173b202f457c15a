import { createServer } from 'node:net';
import pg from 'pg';
import { runCliProcess } from '../helpers/run-cli.js';
import type { PrivatePostgres } from '../helpers/private-postgres.js';

/** Polls until `condition` holds (real time: these tests wait on processes and servers). */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A fresh database on the private cluster, migrated by the built CLI as an operator would. */
export async function createMigratedDatabase(server: PrivatePostgres, name: string): Promise<string> {
  await query(server.url(), `create database ${name}`);
  const url = server.url(name);
  const migrated = await runCliProcess(['migrate'], { DATABASE_URL: url });
  if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
  return url;
}

/** One query on a short-lived connection (the tests' own look at the database, never the worker's). */
export async function query<R extends pg.QueryResultRow = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** GET /healthz: its status code, or 0 when nothing answers. */
export async function health(url: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}
