import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = { anna: 'anna-preparer-pw-1', ben: 'ben-approver-pw-22', vic: 'vic-viewer-pw-333' };

let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let app: FastifyInstance;
let base: string;
let browser: Browser;
let attacker: Server;
let attackerUrl: string;
let caseId: number;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-browser-'));
  ctx = createTestContext(t, {}, { clock: new FixedClock(MORNING) });
  await produceNightWithBreak(ctx, dir);
  for (const [name, role] of [['anna', 'preparer'], ['ben', 'approver'], ['vic', 'viewer']] as const) await addUser(ctx, name, role, PASSWORD[name], 'test');
  caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow()).id;
  app = await buildConsoleApp({ ctx });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
  // Another origin (another port) whose page posts a form to the console as soon as it opens.
  attacker = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(
      `<!DOCTYPE html><form id="f" method="post" action="${base}/cases/${caseId}/note"><input name="note" value="posted from elsewhere"></form><script>document.getElementById('f').submit()</script>`,
    );
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as { port: number }).port}/`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
  await t?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function signIn(name: keyof typeof PASSWORD): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${base}/login`);
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(PASSWORD[name]);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/day`);
  return page;
}

// Evaluated in the page, as a string: the test's own TypeScript has no DOM types.
const overflows = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');

describe.skipIf(!existsSync(CHROMIUM))(`the review console in Chromium (${backend})`, { timeout: 120_000 }, () => {
  it('walks the day: sign-in, the break, an accepted case, a refused self-approval, an approval', async () => {
    const anna = await signIn('anna');
    // The default date is the night whose cut-off passed; its break comes first.
    await expect(anna.locator('h1').textContent()).resolves.toBe(`Business date ${NIGHT}`);
    const firstRow = anna.locator('table.results tbody tr').first();
    await expect(firstRow.getAttribute('class')).resolves.toBe('status-break');
    await expect(firstRow.textContent()).resolves.toContain('123.45');
    expect(await overflows(anna)).toBe(false);

    await anna.getByRole('link', { name: `case #${caseId}` }).click();
    expect(await overflows(anna)).toBe(false);
    const accept = anna.locator(`form[action="/cases/${caseId}/accept"]`);
    await accept.locator('textarea[name="note"]').fill('timing difference, booked Monday');
    await accept.getByRole('button', { name: 'Accept' }).click();
    await anna.waitForURL(`${base}/cases/${caseId}?done=accept`);
    const event = await t.handle.db.selectFrom('case_events').selectAll().where('case_id', '=', caseId).where('action', '=', 'accepted').executeTakeFirstOrThrow();
    expect(event.actor).toBe('anna');

    await anna.goto(`${base}/day?date=${NIGHT}`);
    await anna.getByRole('button', { name: 'Prepare sign-off' }).click();
    await expect(anna.locator('.notice.ok').textContent()).resolves.toContain('prepared by anna');
    const [selfApproval] = await Promise.all([anna.waitForResponse((r) => r.url().endsWith('/signoffs/approve')), anna.getByRole('button', { name: 'Approve sign-off' }).click()]);
    expect(selfApproval.status()).toBe(403);
    await expect(anna.locator('.notice.error').textContent()).resolves.toContain('"anna" prepared this sign-off and cannot also approve it');

    const ben = await signIn('ben');
    await ben.goto(`${base}/day?date=${NIGHT}`);
    await ben.getByRole('button', { name: 'Approve sign-off' }).click();
    await expect(ben.locator('.signoff-state').textContent()).resolves.toBe('approved');
    const row = await t.handle.db.selectFrom('signoffs').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ prepared_by: 'anna', approved_by: 'ben' });
  });

  it('reopens the approved date with "Reopen sign-off" and a note, and refuses (409) a sealed report altered past the triggers', async () => {
    const ben = await signIn('ben');
    await ben.goto(`${base}/day?date=${NIGHT}`);
    const reopen = ben.locator('form[action="/signoffs/reopen"]');
    await reopen.locator('input[name="note"]').fill('EUR fee booked on the wrong day');
    await reopen.getByRole('button', { name: 'Reopen sign-off' }).click();
    await expect(ben.locator('.signoff-state').textContent()).resolves.toBe('reopened');
    await expect(ben.locator('#sign-off').textContent()).resolves.toContain('EUR fee booked on the wrong day');
    await expect(ben.getByRole('button', { name: 'Reopen sign-off' }).count()).resolves.toBe(0);
    expect(await overflows(ben)).toBe(false);

    const { id } = await t.handle.db.selectFrom('signoffs').select('id').executeTakeFirstOrThrow();
    const intact = await ben.goto(`${base}/signoffs/${id}/report`);
    expect(intact!.status()).toBe(200);
    await t.handle.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await sql`update signoffs set report_html = replace(report_html, '123.45', '1.00') where id = ${id}`.execute(trx);
    });
    const altered = await ben.goto(`${base}/signoffs/${id}/report`);
    expect(altered!.status()).toBe(409);
    await expect(ben.locator('.message').textContent()).resolves.toContain('This sealed report does not match its seal');
  });

  it("refuses the viewer's accept with 403", async () => {
    const vic = await signIn('vic');
    await vic.goto(`${base}/cases/${caseId}`);
    const accept = vic.locator(`form[action="/cases/${caseId}/accept"]`);
    await accept.locator('textarea[name="note"]').fill('I think it is fine');
    const [response] = await Promise.all([vic.waitForResponse((r) => r.url().endsWith(`/cases/${caseId}/accept`)), accept.getByRole('button', { name: 'Accept' }).click()]);
    expect(response.status()).toBe(403);
    await expect(vic.locator('.message').textContent()).resolves.toContain('viewer role');
  });

  it('refuses a post without the CSRF token, and a form posted from another origin', async () => {
    const anna = await signIn('anna');
    await anna.goto(`${base}/cases/${caseId}`);
    const status = await anna.evaluate(
      async (url) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'note=no+token' })).status,
      `${base}/cases/${caseId}/note`,
    );
    expect(status).toBe(403);
    const [response] = await Promise.all([anna.waitForResponse((r) => r.url().endsWith(`/cases/${caseId}/note`)), anna.goto(attackerUrl)]);
    expect(response.status()).toBe(403);
    const notes = await t.handle.db.selectFrom('case_events').select('note').where('case_id', '=', caseId).where('action', '=', 'noted').execute();
    expect(notes).toEqual([]);
  });
});
