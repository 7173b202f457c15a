import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser, disableUser } from '../../src/console/console-users.js';
import { detectSignoffChanges } from '../../src/signoff/signoff-service.js';
import { importBooksFile } from '../../src/books/index.js';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { ConsoleClient, MORNING, NIGHT, produceNightWithBreak, writeNightBooks } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const PASSWORD = { anna: 'anna-preparer-pw-1', ben: 'ben-approver-pw-22', vic: 'vic-viewer-pw-333' };

let t: TestDatabase;
let ctx: AppContext;
let clock: FixedClock;
let dir: string;
let app: FastifyInstance;
let caseId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-'));
  clock = new FixedClock(MORNING);
  // A webhook channel, so the outbox holds a row per event.
  ctx = createTestContext(t, { RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hook', RECON_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}` }, { clock });
  await produceNightWithBreak(ctx, dir);
  await addUser(ctx, 'anna', 'preparer', PASSWORD.anna, 'test');
  await addUser(ctx, 'ben', 'approver', PASSWORD.ben, 'test');
  await addUser(ctx, 'vic', 'viewer', PASSWORD.vic, 'test');
  caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').where('kind', '=', 'break').executeTakeFirstOrThrow()).id;
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function signedIn(name: keyof typeof PASSWORD): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  const response = await client.signIn(name, PASSWORD[name]);
  expect(response.statusCode, response.body).toBe(303);
  await client.get('/day');
  return client;
}

// Sign-ins are deliberately costly (scrypt): a test of several of them needs more than the default time.
describe(`the review console (${backend})`, { timeout: 120_000 }, () => {
  it('serves a sign-in page with "User name", "Password" and "Sign in", under a CSP without inline scripts', async () => {
    const response = await new ConsoleClient(app).get('/login');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('<label for="user">User name</label>');
    expect(response.body).toContain('<label for="password">Password</label>');
    expect(response.body).toContain('<button type="submit">Sign in</button>');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.body).not.toMatch(/<script>|<script(?![^>]*src=)[^>]*>/);
    expect(response.body).not.toMatch(/ style="/);
  });

  it('sends a reader without a session to the sign-in page', async () => {
    const response = await new ConsoleClient(app).get('/day');
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/login');
    expect((await new ConsoleClient(app).get('/no-such-page')).statusCode).toBe(303);
  });

  it('sets an HttpOnly, SameSite=Lax session cookie whose id is stored only as its SHA-256', async () => {
    const client = new ConsoleClient(app);
    await client.get('/login');
    const response = await client.post('/login', { user: 'anna', password: PASSWORD.anna });
    const cookie = [response.headers['set-cookie']].flat().find((c) => String(c).startsWith('recon_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const id = client.cookies.get('recon_session')!;
    const rows = await t.handle.db.selectFrom('console_sessions').select('id_sha256').execute();
    expect(rows.map((r) => r.id_sha256)).toContain(createHash('sha256').update(id).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(id);
  });

  it('shows the day with the break first, in major units, with its case and the sign-off state', async () => {
    const client = await signedIn('anna');
    const response = await client.get(`/day?date=${NIGHT}`);
    expect(response.statusCode).toBe(200);
    const body = response.body;
    expect(body).toContain(`Business date ${NIGHT}`);
    expect(body).toMatch(/captured: run \d+, 5 min before the cut-off/);
    expect(body).toContain('books arrived: 2 currencies from books.csv');
    const rows = [...body.matchAll(/<tr class="status-(\w+)">/g)].map((m) => m[1]);
    expect(rows).toEqual(['break', 'matched']);
    expect(body).toContain('<td class="amount">12,345,678.90</td><td class="amount">12,345,555.45</td><td class="amount">123.45</td>');
    expect(body).toContain(`<a href="/cases/${caseId}">case #${caseId}</a> open`);
    expect(body).toContain('Sign-off state: <strong class="signoff-state">not signed</strong>');
    expect(body).toContain('rel="prev"');
    // The default date is the latest whose cut-off passed: the night itself.
    expect((await client.get('/day')).body).toContain(`Business date ${NIGHT}`);
  });

  it('filters and sorts the cases inbox', async () => {
    const client = await signedIn('vic');
    const all = await client.get('/cases?state=open&currency=EUR&kind=break&sort=size');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain(`<a href="/cases/${caseId}">#${caseId}</a>`);
    const none = await client.get('/cases?state=resolved');
    expect(none.body).toContain('No cases match.');
    expect((await client.get('/cases?kind=nonsense')).statusCode).toBe(400);
    expect((await client.get('/no-such-page')).statusCode).toBe(404);
    expect((await client.get('/cases/999999')).statusCode).toBe(404);
  });

  it('refuses a POST without the CSRF token, and one from another origin, with 403 and changes nothing', async () => {
    const client = await signedIn('anna');
    const noToken = await client.post(`/cases/${caseId}/ack`, { note: 'x' }, { csrf: null });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.body).toContain('no valid security token');
    const foreign = await client.post(`/cases/${caseId}/ack`, { note: 'x' }, { origin: 'http://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).toContain('sent from http://evil.example');
    const events = await t.handle.db.selectFrom('case_events').select('action').where('case_id', '=', caseId).execute();
    expect(events.map((e) => e.action)).toEqual(['opened']);
    const audit = await t.handle.db.selectFrom('console_audit').select(['user_name', 'address', 'outcome']).where('outcome', '=', 'refused').where('user_name', '=', 'anna').execute();
    expect(audit.length).toBeGreaterThanOrEqual(2);
  });

  it("shows a viewer no case form, and still refuses a viewer's accept with 403 on the server", async () => {
    const client = await signedIn('vic');
    const page = await client.get(`/cases/${caseId}`);
    for (const button of ['Acknowledge', 'Assign', 'Add note', 'Accept', 'Resolve', 'Reopen']) expect(page.body).not.toContain(`<button type="submit">${button}</button>`);
    expect(page.body).toContain('You have the viewer role: you can look at everything but change nothing.');
    // A preparer sees the forms of what the open case allows, and not "Reopen".
    const anna = await (await signedIn('anna')).get(`/cases/${caseId}`);
    for (const button of ['Acknowledge', 'Assign', 'Add note', 'Accept', 'Resolve']) expect(anna.body).toContain(`<button type="submit">${button}</button>`);
    expect(anna.body).not.toContain('<button type="submit">Reopen</button>');
    const response = await client.post(`/cases/${caseId}/accept`, { note: 'looks fine to me' });
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('viewer role');
    const c = await t.handle.db.selectFrom('reconciliation_cases').select('state').where('id', '=', caseId).executeTakeFirstOrThrow();
    expect(c.state).toBe('open');
  });

  it('refuses "Prepare sign-off" while the break is open', async () => {
    const client = await signedIn('anna');
    const response = await client.post('/signoffs/prepare', { date: NIGHT });
    // Post-redirect-get: the day view says why; loading it again does not post again.
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/day?date=${NIGHT}`);
    const day = await client.get(`/day?date=${NIGHT}`);
    expect(day.body).toContain('cannot be signed while a case is open');
    expect((await client.get(`/day?date=${NIGHT}`)).body).not.toContain('cannot be signed while a case is open');
    expect(await t.handle.db.selectFrom('signoffs').selectAll().execute()).toEqual([]);
  });

  it('needs a note to acknowledge, and never signs a date whose break was acknowledged without one', async () => {
    const db = t.handle.db;
    const anna = await signedIn('anna');
    const form = (await anna.get(`/cases/${caseId}`)).body;
    // The form says the note is required, and a browser enforces it.
    expect(form).toMatch(new RegExp(`<form method="post" action="/cases/${caseId}/ack"[^>]*>.*?<label>Note \\(required\\) <textarea name="note"[^>]* required`));
    // Sent empty anyway (no browser validation): refused in the page's words, not the CLI's.
    const silent = await anna.post(`/cases/${caseId}/ack`, { note: ' ' });
    // Post-redirect-get: the refusal is shown on the case page it redirects to.
    expect(silent.statusCode).toBe(303);
    const refusedPage = (await anna.get(silent.headers.location as string)).body;
    expect(refusedPage).toContain('A note is required to acknowledge this case: say what is being done about it. Nothing was changed.');
    expect(refusedPage).not.toContain('--note');
    expect(refusedPage).not.toContain('cases ack');
    expect(await db.selectFrom('console_audit').select(['action', 'outcome']).where('action', '=', 'case.ack').execute()).toEqual([{ action: 'case.ack', outcome: 'refused' }]);
    expect((await db.selectFrom('reconciliation_cases').select('state').where('id', '=', caseId).executeTakeFirstOrThrow()).state).toBe('open');
    // An acknowledgement without a note from before the rule (or written by hand) still blocks.
    await db.transaction().execute(async (trx) => {
      await sql`update reconciliation_cases set state = 'acknowledged' where id = ${caseId}`.execute(trx);
      await sql`insert into case_events (case_id, at, actor, action, from_state, to_state) values (${caseId}, now(), 'legacy', 'acknowledged', 'open', 'acknowledged')`.execute(trx);
    });
    await anna.get(`/day?date=${NIGHT}`);
    const refused = await anna.post('/signoffs/prepare', { date: NIGHT });
    expect(refused.statusCode).toBe(303);
    expect((await anna.get(refused.headers.location as string)).body).toContain(`cannot be signed while a case was acknowledged without a note: #${caseId} default EUR break`);
    expect(await db.selectFrom('signoffs').selectAll().execute()).toEqual([]);
  });

  it('applies the CLI rules: accept needs a note; with one, case_events names the signed-in preparer', async () => {
    const client = await signedIn('anna');
    const missing = await client.post(`/cases/${caseId}/accept`, { note: '  ' });
    expect(missing.statusCode).toBe(303);
    expect(missing.headers.location).toBe(`/cases/${caseId}`);
    const refusal = (await client.get(`/cases/${caseId}`)).body;
    expect(refusal).toContain('A note is required to accept this difference: say why it is accepted. Nothing was changed.');
    expect(refusal).not.toContain('cases accept');
    const response = await client.post(`/cases/${caseId}/accept`, { note: 'timing difference, booked Monday' });
    expect(response.statusCode).toBe(303);
    const event = await t.handle.db.selectFrom('case_events').selectAll().where('case_id', '=', caseId).where('action', '=', 'accepted').executeTakeFirstOrThrow();
    expect(event.actor).toBe('anna');
    expect(event.note).toContain('timing difference, booked Monday');
    const page = (await client.get(`/cases/${caseId}?done=accept`)).body;
    expect(page).toContain('Done: accept, recorded as anna.');
    // The state once, not "accepted (accepted)".
    expect(page).toContain('<dt>State</dt><dd>accepted</dd>');
  });

  it('prepares, refuses the self-approval, lets the approver approve, and seals the report', async () => {
    const anna = await signedIn('anna');
    const prepared = await anna.post('/signoffs/prepare', { date: NIGHT });
    expect(prepared.statusCode, prepared.body).toBe(303);
    const annaDay = await anna.get(`/day?date=${NIGHT}`);
    expect(annaDay.body).toContain('prepared by anna');
    // The preparer is not offered the approval, and the server refuses it all the same.
    expect(annaDay.body).not.toContain('Approve sign-off</button>');
    expect(annaDay.body).toContain('Waiting for an approver other than anna to approve it.');
    const self = await anna.post('/signoffs/approve', { date: NIGHT });
    expect(self.statusCode).toBe(303);
    expect((await anna.get(`/day?date=${NIGHT}`)).body).toContain('&quot;anna&quot; prepared this sign-off and cannot also approve it');
    const ben = await signedIn('ben');
    const benDay = await ben.get(`/day?date=${NIGHT}`);
    expect(benDay.body).toContain('Approve sign-off</button>');
    const approved = await ben.post('/signoffs/approve', { date: NIGHT });
    expect(approved.statusCode, approved.body).toBe(303);
    expect((await ben.get(`/day?date=${NIGHT}`)).body).toContain('Sign-off state: <strong class="signoff-state">approved</strong>');
    const row = await t.handle.db.selectFrom('signoffs').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ business_date: NIGHT, prepared_by: 'anna', approved_by: 'ben', account_set: ['default'] });
    expect(row.report_sha256).toBe(createHash('sha256').update(row.report_html, 'utf8').digest('hex'));
    const download = await ben.get(`/signoffs/${row.id}/report`);
    expect(download.statusCode).toBe(200);
    expect(createHash('sha256').update(download.rawPayload).digest('hex')).toBe(row.report_sha256);
    expect(download.body).toContain('123.45');
  });

  it('keeps signoffs append-only: the report cannot be rewritten nor the row deleted', async () => {
    const db = t.handle.db;
    await expect(sql`update signoffs set report_html = 'forged'`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`update signoffs set approved_by = 'someone', approved_at = now()`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from signoffs`.execute(db)).rejects.toThrow(/append-only/);
  });

  it('locks the approved date: identical books change nothing, changed books and SQL by hand are refused naming the sign-off', async () => {
    const db = t.handle.db;
    clock.advance(60_000);
    const same = await importBooksFile(ctx, writeNightBooks(dir, 'books-again.csv'));
    expect(same).toMatchObject({ inserted: 0, changed: 0, unchanged: 2, removed: 0, importId: null });
    expect(await detectSignoffChanges(ctx)).toEqual([]);
    await expect(importBooksFile(ctx, writeNightBooks(dir, 'books-fixed.csv', { fixed: true }))).rejects.toThrow(
      /^2026-11-21 of account "default" is signed off and locked \(sign-off #1, approved by ben at [^)]+\): this import would change 1 of its expected balances\. Nothing was written\..*wallet-recon signoff reopen --date 2026-11-21/,
    );
    await expect(sql`update expected_balances set balance = balance + 1 where business_date = ${NIGHT}`.execute(db)).rejects.toThrow(/expected_balances of account "default" on 2026-11-21 are locked: sign-off #1 was approved by ben/);
    await expect(sql`delete from reconciliation_results where business_date = ${NIGHT}`.execute(db)).rejects.toThrow(/reconciliation_results of account "default" on 2026-11-21 are locked/);
    // A reconcile under another tolerance would change the sealed results: refused, nothing written.
    const tolerant = createTestContext(t, { RECON_TOLERANCE: '200', RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hook', RECON_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}` }, { clock });
    await expect(runReconcileJob(tolerant, { date: NIGHT })).rejects.toThrow(/^2026-11-21 of account "default" is signed off and locked \(sign-off #1, approved by ben at [^)]+\): reconciling it again would change its sealed results\./);
    expect(await runReconcileJob(ctx, { date: NIGHT })).toMatchObject({ exitCode: 0 });
    // No capture is ever recorded for the locked date.
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'manual', businessDate: NIGHT, startedAt: clock.now(), timing: { cutoffAt: new Date('2026-11-22T00:00:00Z'), driftSeconds: 0, endOfDay: true } });
    await expect(markRunSucceeded(db, runId, clock.now(), { walletsReported: 0, walletsFetched: 0, pagesFetched: 0, requests: 1 })).rejects.toThrow(/snapshots of account "default" on 2026-11-21 are locked: sign-off #1 was approved by ben/);
    expect((await db.selectFrom('signoffs').select(['approved_by', 'invalidated_at']).executeTakeFirstOrThrow()).invalidated_at).toBeNull();
  });

  it('"Reopen sign-off": only an approver or admin, only with a note; one signoff.reopened, the history kept, the date unlocked', async () => {
    const db = t.handle.db;
    const before = await db.selectFrom('signoffs').select(['id', 'report_sha256']).executeTakeFirstOrThrow();
    const vic = await signedIn('vic');
    expect((await vic.get(`/day?date=${NIGHT}`)).body).not.toContain('Reopen sign-off');
    const viewerReopen = await vic.post('/signoffs/reopen', { date: NIGHT, note: 'wrong' });
    expect(viewerReopen.statusCode).toBe(303);
    expect((await vic.get(viewerReopen.headers.location as string)).body).toContain('Refused:');
    const ben = await signedIn('ben');
    expect((await ben.get(`/day?date=${NIGHT}`)).body).toContain('Reopen sign-off');
    const noNote = await ben.post('/signoffs/reopen', { date: NIGHT, note: '  ' });
    expect(noNote.statusCode).toBe(303);
    expect((await ben.get(noNote.headers.location as string)).body).toContain('needs a note saying why the closed day must change');
    const reopenedPost = await ben.post('/signoffs/reopen', { date: NIGHT, note: 'EUR fee booked on the wrong day' });
    expect(reopenedPost.statusCode, reopenedPost.body).toBe(303);
    const reopened = await ben.get(reopenedPost.headers.location as string);
    expect(reopened.body).toContain('Sign-off state: <strong class="signoff-state">reopened</strong>');
    expect(reopened.body).toContain('EUR fee booked on the wrong day');
    // The date needs a fresh prepare: an approver is told so, a preparer is offered the button.
    expect(reopened.body).toContain('Waiting for a preparer to prepare the sign-off.');
    const outbox = await db.selectFrom('notifications').select(['dedupe_key']).where('event_type', '=', 'signoff.reopened').execute();
    expect(outbox).toEqual([{ dedupe_key: `signoff.reopened:${before.id}` }]);
    expect(await db.selectFrom('signoffs').select(['reopened_by', 'reopen_note']).execute()).toEqual([{ reopened_by: 'ben', reopen_note: 'EUR fee booked on the wrong day' }]);
    const fixed = await importBooksFile(ctx, writeNightBooks(dir, 'books-fixed.csv', { fixed: true }));
    expect(fixed.changed).toBe(1);
    const download = await ben.get(`/signoffs/${before.id}/report`);
    expect(download.statusCode).toBe(200);
    expect(createHash('sha256').update(download.rawPayload).digest('hex')).toBe(before.report_sha256);
    expect(download.headers['x-signoff-approved']).toMatch(/^ben 2026-11-22T/);
  });

  it('voids a prepared sign-off once when its books change (one signoff.invalidated, in the import itself), never on an identical import', async () => {
    const db = t.handle.db;
    const anna = await signedIn('anna');
    await anna.get(`/day?date=${NIGHT}`);
    const prepared = await anna.post('/signoffs/prepare', { date: NIGHT });
    expect(prepared.statusCode, prepared.body).toBe(303);
    const second = await db.selectFrom('signoffs').select(['id']).where('invalidated_at', 'is', null).where('reopened_at', 'is', null).executeTakeFirstOrThrow();
    clock.advance(60_000);
    await importBooksFile(ctx, writeNightBooks(dir, 'books-fixed-again.csv', { fixed: true }));
    expect(await db.selectFrom('signoffs').select('invalidated_at').where('id', '=', second.id).executeTakeFirstOrThrow()).toEqual({ invalidated_at: null });
    await importBooksFile(ctx, writeNightBooks(dir, 'books-broken.csv'));
    const invalidated = await db.selectFrom('signoffs').select(['invalidated_at', 'invalidation']).where('id', '=', second.id).executeTakeFirstOrThrow();
    expect(invalidated.invalidated_at).not.toBeNull();
    expect((invalidated.invalidation as string[]).join('\n')).toMatch(/default: the books were re-imported/);
    expect(await detectSignoffChanges(ctx)).toEqual([]);
    const outbox = await db.selectFrom('notifications').select(['dedupe_key']).where('event_type', '=', 'signoff.invalidated').execute();
    expect(outbox).toEqual([{ dedupe_key: `signoff.invalidated:${second.id}` }]);
    const day = await (await signedIn('vic')).get(`/day?date=${NIGHT}`);
    expect(day.body).toContain('<strong>changed after sign-off</strong>');
  });

  it('slows sign-in after five failures for a user within 15 minutes, then lets them in again', async () => {
    await addUser(ctx, 'carl', 'viewer', 'carl-password-1234', 'test');
    const client = new ConsoleClient(app);
    for (let i = 0; i < 5; i++) {
      await client.get('/login');
      expect((await client.post('/login', { user: 'carl', password: 'wrong' })).statusCode).toBe(401);
    }
    await client.get('/login');
    const refused = await client.post('/login', { user: 'carl', password: 'carl-password-1234' });
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Too many failed sign-ins for &quot;carl&quot;');
    clock.advance(15 * 60_000 + 1000);
    await client.get('/login');
    expect((await client.post('/login', { user: 'carl', password: 'carl-password-1234' })).statusCode).toBe(303);
  });

  it('ends sessions that are idle too long, and every session of a disabled user', async () => {
    await addUser(ctx, 'dora', 'preparer', 'dora-password-1234', 'test');
    const client = new ConsoleClient(app);
    await client.signIn('dora', 'dora-password-1234');
    expect((await client.get('/cases')).statusCode).toBe(200);
    await disableUser(ctx, 'dora', 'test');
    expect((await client.get('/cases')).statusCode).toBe(303);
    const idle = await signedIn('vic');
    clock.advance(31 * 60_000);
    expect((await idle.get('/cases')).headers.location).toBe('/login');
  });
});

describe(`the console behind a TLS proxy (${backend})`, { timeout: 120_000 }, () => {
  it('marks the cookie Secure and accepts forms only from RECON_CONSOLE_URL', async () => {
    const secure = await buildConsoleApp({ ctx, publicUrl: new URL('https://recon.example.com/') });
    try {
      const client = new ConsoleClient(secure, 'https://recon.example.com');
      const response = await client.signIn('ben', PASSWORD.ben);
      expect(response.statusCode).toBe(303);
      expect(String([response.headers['set-cookie']].flat().find((c) => String(c).startsWith('__Host-recon_session=')))).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax/);
      expect(client.cookies.has('recon_session')).toBe(false);
      await client.get('/day');
      const local = await client.post('/signoffs/approve', { date: NIGHT }, { origin: 'http://localhost:80' });
      expect(local.statusCode).toBe(403);
    } finally {
      await secure.close();
    }
  });
});
