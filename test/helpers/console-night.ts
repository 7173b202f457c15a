import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { importBooksFile } from '../../src/books/index.js';

/** The business date of the night these helpers produce, and when "now" is for them (the morning after). */
export const NIGHT = '2026-11-21';
export const MORNING = '2026-11-22T06:00:00Z';
/** EUR on the gateway; the books say 123.45 EUR less: a break of 123.45 EUR. */
export const GATEWAY_EUR = 1_234_567_890n;
export const BREAK = 12_345n;

/** Writes a books CSV of the night: EUR with the break (unless `fixed`), USD matched. */
export function writeNightBooks(dir: string, name: string, options: { fixed?: boolean } = {}): string {
  const file = path.join(dir, name);
  // Books are written as finance teams export them: major units (EUR and USD have 2 decimals).
  const major = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;
  writeFileSync(file, `business_date,currency,balance\n${NIGHT},EUR,${major(options.fixed ? GATEWAY_EUR : GATEWAY_EUR - BREAK)}\n${NIGHT},USD,${major(500_000n)}\n`);
  return file;
}

/** A night with a break: an end-of-day snapshot of account "default", its books, reconciled (a case opens). */
export async function produceNightWithBreak(ctx: AppContext, dir: string): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${NIGHT}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: NIGHT, startedAt: at, timing: { cutoffAt: new Date('2026-11-22T00:00:00Z'), driftSeconds: -300, endOfDay: true } });
  await insertSnapshotRows(db, runId, 'default', at, [
    { currency: 'EUR', balance: GATEWAY_EUR, singleBalance: GATEWAY_EUR },
    { currency: 'USD', balance: 500_000n, singleBalance: 500_000n },
  ]);
  await markRunSucceeded(db, runId, at, { walletsReported: 2, walletsFetched: 2, pagesFetched: 1, requests: 3 });
  await importBooksFile(ctx, writeNightBooks(dir, 'books.csv'));
  await runReconcileJob(ctx, { date: NIGHT });
}

/** A browser-like client of a console app under inject(): keeps its cookies, reads each page's CSRF token. */
export class ConsoleClient {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(
    readonly app: FastifyInstance,
    readonly origin = 'http://localhost:80',
  ) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  keep(headers: Record<string, unknown>): void {
    const set = headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set === undefined ? [] : [set]) {
      const [pair] = String(line).split(';');
      const [name, ...value] = pair!.split('=');
      if (/expires=Thu, 01 Jan 1970/i.test(String(line)) || value.join('=') === '') this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
  }

  async get(url: string) {
    const response = await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader() } });
    this.keep(response.headers);
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body);
    if (token) this.csrf = token[1]!;
    return response;
  }

  async post(url: string, fields: Record<string, string>, options: { csrf?: string | null; origin?: string | null } = {}) {
    const body = new URLSearchParams({ ...fields, ...(options.csrf === null ? {} : { _csrf: options.csrf ?? this.csrf }) }).toString();
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookieHeader() };
    if (options.origin !== null) headers.origin = options.origin ?? this.origin;
    const response = await this.app.inject({ method: 'POST', url, headers, payload: body });
    this.keep(response.headers);
    return response;
  }

  async signIn(user: string, password: string) {
    await this.get('/login');
    return this.post('/login', { user, password });
  }
}
