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
  it('walks the day: sign-in, the break, an accepted case, no approval offered to the preparer, an approval', async () => {
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
    // Post-redirect-get: the browser ends on the day's address, not on the form's.
    await anna.waitForURL(`${base}/day?date=${NIGHT}`);
    await expect(anna.locator('.notice.ok').textContent()).resolves.toContain('prepared by anna');
    // The preparer is offered no approval of her own sign-off.
    await expect(anna.getByRole('button', { name: 'Approve sign-off' }).count()).resolves.toBe(0);
    await expect(anna.locator('#sign-off').textContent()).resolves.toContain('Waiting for an approver other than anna to approve it.');
    await anna.reload();
    await expect(anna.locator('.notice').count()).resolves.toBe(0);

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

  it('shows a viewer no action button at 1280 px, and the server still refuses a viewer\'s accept with 403', async () => {
    const vic = await signIn('vic');
    // Every button a viewer sees only reads or navigates: sign out, show a date, filter.
    const actionButtons = async () => (await vic.locator('main button').allTextContents()).filter((text) => !['Show', 'Filter'].includes(text.trim()));
    await vic.goto(`${base}/day?date=${NIGHT}`);
    await expect(actionButtons()).resolves.toEqual([]);
    await vic.goto(`${base}/cases/${caseId}`);
    await expect(actionButtons()).resolves.toEqual([]);
    await expect(vic.locator(`form[action^="/cases/${caseId}/"]`).count()).resolves.toBe(0);
    await vic.goto(`${base}/overview`);
    await expect(actionButtons()).resolves.toEqual([]);
    const token = await vic.locator('input[name="_csrf"]').first().getAttribute('value');
    const status = await vic.evaluate(
      async ([url, csrf]) => (await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `note=I+think+it+is+fine&_csrf=${encodeURIComponent(csrf!)}` })).status,
      [`${base}/cases/${caseId}/accept`, token],
    );
    expect(status).toBe(403);
    const c = await t.handle.db.selectFrom('reconciliation_cases').select('state').where('id', '=', caseId).executeTakeFirstOrThrow();
    expect(c.state).not.toBe('open');
  });

  it('shows the overview: the last 14 business dates across, every account with data down, each cell linking to its day', async () => {
    const ben = await signIn('ben');
    await ben.getByRole('link', { name: 'Overview' }).click();
    await ben.waitForURL(`${base}/overview`);
    await expect(ben.locator('#overview thead th.date').count()).resolves.toBe(14);
    await expect(ben.locator('#overview tbody th[scope="row"]').allTextContents()).resolves.toEqual(['default']);
    await expect(ben.locator('#overview tbody td.cell').count()).resolves.toBe(14);
    // The newest date is the night; earlier dates have nothing yet.
    await expect(ben.locator('#overview thead th.date').last().textContent()).resolves.toBe(NIGHT.slice(5));
    const night = ben.locator('#overview tbody td.cell').last();
    await expect(night.textContent()).resolves.toMatch(/^(signed off|1 break|accepted|matched)$/);
    await expect(ben.locator('#overview tbody td.cell').first().textContent()).resolves.toBe('nothing yet');
    expect(await overflows(ben)).toBe(false);
    await night.getByRole('link').click();
    await ben.waitForURL(`${base}/day?date=${NIGHT}`);
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

  it('asks for nothing that is missing (no favicon 404) and lets a local user change their password on its page', async () => {
    await addUser(ctx, 'cara', 'viewer', 'cara-first-password-1', 'test');
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    const missing: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    await page.goto(`${base}/login`);
    await page.getByLabel('User name').fill('cara');
    await page.getByLabel('Password').fill('cara-first-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/day`);
    await page.getByRole('link', { name: 'Change password' }).click();
    await page.getByLabel('Current password').fill('cara-first-password-1');
    await page.getByLabel('New password', { exact: true }).fill('cara-second-password-2');
    await page.getByLabel('New password again').fill('cara-second-password-2');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your password was changed; your other sessions ended.');
    // Browsers ask for /favicon.ico on their own, a moment after the page.
    await page.waitForTimeout(300);
    expect(missing).toEqual([]);
  });
});
