import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/business-date/zoned-time.js';
import { listChainRowsBetween, listChainRowsOfDates } from '../../src/db/evidence-pack.repository.js';
import { checkChainRows } from '../../src/evidence/pack-manifest.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A month's pack carries the sign-off chain from the first covered row to the last. chain_seq is
// read as text; ordered by that text, row 10 came before row 9, so a month of ten or more
// sign-offs got a chain cut short at row 9 and verify-pack refused it ("sign-off #10 does not
// match its chain row"). Twelve sign-offs cross that boundary.
let t: TestDatabase;
const SIGNOFFS = 12;
const dates = Array.from({ length: SIGNOFFS }, (_, i) => addDays('2026-09-01', i));
const NOW = new Date('2026-10-20T06:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  for (const date of dates) {
    const html = `<!doctype html><title>${date}</title><p>Sealed report of ${date}.</p>\n`;
    const row = await t.handle.db
      .insertInto('signoffs')
      .values({ account_set: ['merchant-001'], business_date: date, prepared_by: 'anna', prepared_at: NOW, report_sha256: createHash('sha256').update(html).digest('hex'), report_html: html, inputs: JSON.stringify({ accountSet: ['merchant-001'], accounts: [] }) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.handle.db.updateTable('signoffs').set({ approved_by: 'ben', approved_at: NOW }).where('id', '=', row.id).execute();
  }
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

describe(`the evidence pack's sign-off chain with ten or more rows (${backend})`, () => {
  it('lists the chain rows of the dates in chain order, by number', async () => {
    const rows = await listChainRowsOfDates(t.handle.db, dates);
    expect(rows.map((r) => r.chain_seq)).toEqual(dates.map((_, i) => String(i + 1)));
    expect(rows.map((r) => r.business_date)).toEqual(dates);
  });

  it('gives the whole chain from the first covered row to the last, linked', async () => {
    const covered = await listChainRowsOfDates(t.handle.db, dates);
    const chain = await listChainRowsBetween(t.handle.db, covered[0]!.chain_seq, covered.at(-1)!.chain_seq);
    expect(chain).toHaveLength(SIGNOFFS);
    expect(chain.map((r) => r.chain_seq)).toEqual(dates.map((_, i) => String(i + 1)));
    expect(checkChainRows(chain)).toBeUndefined();
  });
});
