import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';

// The sign-off checks read their rows through the repositories; here the rows are given, so
// each decision is judged alone (the database tests cover the queries).
const rows = vi.hoisted(() => ({
  report: undefined as { html: string; sha256: string; businessDate: string } | undefined,
  locks: [] as unknown[],
  lockQueries: [] as unknown[],
  statuses: [] as Array<{ account: string; state: string; owed_reason: string | null }>,
  timing: new Map<string, { endOfDay: boolean; finishedByCutoff: boolean }>(),
}));
vi.mock('../../src/db/signoff.repository.js', () => ({
  readSignoffReport: async () => rows.report,
  findDateLocks: async (_db: unknown, pairs: unknown[]) => {
    rows.lockQueries.push(pairs);
    return rows.locks;
  },
  findAuthoritativeRunTiming: async (_db: unknown, account: string) => rows.timing.get(account),
  listResultStatuses: async () => [],
  listLiveSignoffs: async () => [],
  loadSealedDigests: async () => new Map(),
}));
vi.mock('../../src/db/reconciliation-owed.repository.js', () => ({
  listReconciliationStatus: async () => rows.statuses,
}));

const { lockedDateError, findLocks } = await import('../../src/signoff/date-lock.js');
const { readSealedReport, sealHolds, sealOf, SEAL_MISMATCH } = await import('../../src/signoff/seal.js');
const { describeUnsettled, findUnsettledAccounts } = await import('../../src/signoff/settle-check.js');
const { describeInputChanges } = await import('../../src/signoff/sealed-inputs.js');
const { DateLockedError, SealMismatchError } = await import('../../src/errors.js');

const db = {} as never;
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

beforeEach(() => {
  rows.report = undefined;
  rows.locks = [];
  rows.lockQueries = [];
  rows.statuses = [];
  rows.timing = new Map();
});

describe('the seal of a report (seal.ts)', () => {
  it('is the SHA-256 of the report’s UTF-8 bytes, in hex', () => {
    expect(sealOf('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sealOf('<p>EUR 1.234,56 — Zürich</p>')).toBe(sha256('<p>EUR 1.234,56 — Zürich</p>'));
    expect(sealOf('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('holds for a stored report that still hashes to its seal, and for nothing else', async () => {
    expect(await sealHolds(db, 1)).toBe(false);
    rows.report = { html: '<p>sealed</p>', sha256: sha256('<p>sealed</p>'), businessDate: '2026-11-20' };
    expect(await sealHolds(db, 1)).toBe(true);
    rows.report = { html: '<p>sealed!</p>', sha256: sha256('<p>sealed</p>'), businessDate: '2026-11-20' };
    expect(await sealHolds(db, 1)).toBe(false);
  });

  it('serves a report that holds and refuses an altered one, naming the sign-off, both hashes and the way out', async () => {
    expect(await readSealedReport(db, 3)).toBeUndefined();
    const sealed = { html: '<p>sealed</p>', sha256: sha256('<p>sealed</p>'), businessDate: '2026-11-20' };
    rows.report = sealed;
    expect(await readSealedReport(db, 3)).toEqual(sealed);
    rows.report = { ...sealed, html: '<p>altered</p>' };
    const refusal = readSealedReport(db, 3);
    await expect(refusal).rejects.toBeInstanceOf(SealMismatchError);
    await expect(readSealedReport(db, 3)).rejects.toThrow(
      `${SEAL_MISMATCH}: sign-off #3 of 2026-11-20 was sealed with SHA-256 ${sealed.sha256}, its stored report now hashes to ${sha256('<p>altered</p>')}. Run "wallet-recon signoff verify" and restore the database from a backup.`,
    );
    expect(SEAL_MISMATCH).toBe('This sealed report does not match its seal');
  });
});

describe('a closed date refuses writes (date-lock.ts)', () => {
  const lock = { signoffId: 12, account: 'eu-main', businessDate: '2026-11-20', approvedBy: 'petra', approvedAt: new Date('2026-11-21T08:05:00Z') };

  it('names the date, account, sign-off, approver and time in RECON_TIMEZONE, what would have changed, and how to reopen', () => {
    const error = lockedDateError(lock, 'the books would change', 'Europe/Berlin');
    expect(error).toBeInstanceOf(DateLockedError);
    expect(error.message).toBe(
      '2026-11-20 of account "eu-main" is signed off and locked (sign-off #12, approved by petra at 2026-11-21 09:05 CET): the books would change. ' +
        'Nothing was written. If the closed day must change, an approver reopens it first: wallet-recon signoff reopen --date 2026-11-20 --as NAME --password-stdin --note TEXT',
    );
  });

  it('asks for each (account, date) pair once', async () => {
    rows.locks = [lock];
    const pairs = [
      { account: 'eu-main', businessDate: '2026-11-20' },
      { account: 'eu-main', businessDate: '2026-11-20' },
      { account: 'eu-main', businessDate: '2026-11-21' },
      { account: 'us-main', businessDate: '2026-11-20' },
    ];
    expect(await findLocks(db, pairs)).toEqual([lock]);
    expect(rows.lockQueries).toEqual([[pairs[0], pairs[2], pairs[3]]]);
  });
});

describe('only settled results are signed (settle-check.ts)', () => {
  // Cut-off 18:00 Berlin (17:00Z in November), capture window two hours each side, books due 6 h after the cut-off.
  const config = { timezone: 'Europe/Berlin', cutoff: '18:00', captureWindowMs: 2 * 3_600_000, booksDeadlineMs: 6 * 3_600_000, bankAccounts: [] };
  const ctxAt = (iso: string) => ({ clock: { now: () => new Date(iso) }, config, database: { db } }) as never;
  const date = '2026-11-20';

  it('keeps every account back before the cut-off: the day is not over', async () => {
    expect(await findUnsettledAccounts(ctxAt('2026-11-20T16:59:59Z'), ['eu-main', 'us-main'], date)).toEqual([
      { account: 'eu-main', state: 'capture_window', detail: 'its cut-off (2026-11-20 18:00 CET) has not passed: the day is not over' },
      { account: 'us-main', state: 'capture_window', detail: 'its cut-off (2026-11-20 18:00 CET) has not passed: the day is not over' },
    ]);
  });

  it('keeps an account back inside its capture window unless an end-of-day capture finished by the cut-off', async () => {
    rows.statuses = [
      { account: 'a', state: 'current', owed_reason: null },
      { account: 'b', state: 'current', owed_reason: null },
      { account: 'c', state: 'current', owed_reason: null },
    ];
    rows.timing.set('a', { endOfDay: true, finishedByCutoff: true });
    rows.timing.set('b', { endOfDay: true, finishedByCutoff: false });
    rows.timing.set('c', { endOfDay: false, finishedByCutoff: true });
    const inside = { state: 'capture_window', detail: 'inside its capture window until 2026-11-20 20:00 CET: a capture may still set its closing balance' };
    expect(await findUnsettledAccounts(ctxAt('2026-11-20T17:00:00Z'), ['a', 'b', 'c', 'd'], date)).toEqual([
      { account: 'b', ...inside },
      { account: 'c', ...inside },
      { account: 'd', ...inside },
    ]);
    // When the window closes, what was captured is final.
    expect(await findUnsettledAccounts(ctxAt('2026-11-20T19:00:00Z'), ['a', 'b', 'c'], date)).toEqual([]);
  });

  it('names what is still to come after the window: nothing captured, results owed, books awaited or missed', async () => {
    rows.statuses = [
      { account: 'owed', state: 'owed', owed_reason: 'books re-imported' },
      { account: 'owed-why', state: 'owed', owed_reason: null },
      { account: 'books', state: 'awaiting_books', owed_reason: null },
      { account: 'none', state: 'not_captured', owed_reason: null },
      { account: 'done', state: 'current', owed_reason: null },
    ];
    const accounts = ['owed', 'owed-why', 'books', 'none', 'absent', 'done'];
    const expected = (booksDetail: string) => [
      { account: 'owed', state: 'owed', detail: 'results owed (books re-imported): run "wallet-recon reconcile --date 2026-11-20"' },
      { account: 'owed-why', state: 'owed', detail: 'results owed (an input changed): run "wallet-recon reconcile --date 2026-11-20"' },
      { account: 'books', state: 'awaiting_books', detail: booksDetail },
      { account: 'none', state: 'not_captured', detail: 'nothing captured and no miss recorded: nothing to sign for it' },
      { account: 'absent', state: 'not_captured', detail: 'nothing captured and no miss recorded: nothing to sign for it' },
    ];
    expect(await findUnsettledAccounts(ctxAt('2026-11-20T22:59:59Z'), accounts, date)).toEqual(
      expected('its books have not been imported and their deadline has not passed: import them ("wallet-recon ledger import")'),
    );
    expect(await findUnsettledAccounts(ctxAt('2026-11-20T23:00:00Z'), accounts, date)).toEqual(
      expected('its books deadline passed: run "wallet-recon reconcile --date 2026-11-20" to record them as missing'),
    );
  });

  it('refuses to sign in one sentence naming each account, its state and what to do', () => {
    expect(
      describeUnsettled(date, [
        { account: 'eu-main', state: 'owed', detail: 'results owed (x)' },
        { account: 'us-main', state: 'not_captured', detail: 'nothing captured' },
      ]),
    ).toBe('2026-11-20 cannot be signed yet: eu-main is owed (results owed (x)); us-main is not_captured (nothing captured). Nothing was signed.');
  });
});

describe('what changed after sign-off, edge cases (describeInputChanges)', () => {
  const base = { account: 'eu-main', runId: 7, booksImportId: 3, booksImportIds: [3], previousRunId: 5, resultsDigest: 'a', cases: { '12': 'accepted' } };
  const signed = { accountSet: ['eu-main'], accounts: [base] };
  const now = (change: object, accountSet: string[] | undefined = ['eu-main']) => ({ accountSet, accounts: [{ ...base, ...change }] });

  it('names a snapshot that is gone, and one that appeared where there was none', () => {
    expect(describeInputChanges(signed, now({ runId: null }))).toEqual(["eu-main: the snapshot it was signed on (run 7) is no longer the day's snapshot"]);
    expect(describeInputChanges({ accounts: [{ ...base, runId: null }] }, now({}))).toEqual(["eu-main: a better snapshot became the day's snapshot (run none → run 7)"]);
  });

  it('treats an account no longer listed as having nothing: no run, no books, no cases', () => {
    expect(describeInputChanges(signed, { accountSet: ['eu-main'], accounts: [] })).toEqual([
      "eu-main: the snapshot it was signed on (run 7) is no longer the day's snapshot",
      'eu-main: the books were re-imported (import 3 → import none)',
    ]);
  });

  it('reads one books import where the list was not recorded, and none as none', () => {
    expect(describeInputChanges({ accounts: [{ ...base, booksImportIds: undefined, booksImportId: null }] }, now({ booksImportIds: undefined, booksImportId: 4 }))).toEqual([
      'eu-main: the books were re-imported (import none → import 4)',
    ]);
    expect(describeInputChanges({ accounts: [{ ...base, booksImportIds: undefined }] }, now({ booksImportIds: undefined }))).toEqual([]);
    expect(describeInputChanges({ accounts: [{ ...base, booksImportIds: undefined, booksImportId: null }] }, now({ booksImportIds: undefined, booksImportId: null }))).toEqual([]);
  });

  it('names a previous snapshot that came or went, and skips what either side did not record', () => {
    expect(describeInputChanges(signed, now({ previousRunId: null }))).toEqual(["eu-main: the previous date's snapshot changed (run 5 → run none), so the movement did"]);
    expect(describeInputChanges({ accounts: [{ ...base, previousRunId: null }] }, now({}))).toEqual(["eu-main: the previous date's snapshot changed (run none → run 5), so the movement did"]);
    expect(describeInputChanges({ accounts: [{ ...base, previousRunId: undefined, resultsDigest: undefined }] }, now({ previousRunId: 6, resultsDigest: 'b' }))).toEqual([]);
    expect(describeInputChanges(signed, now({ previousRunId: undefined, resultsDigest: undefined }))).toEqual([]);
    expect(describeInputChanges({ accounts: [base] }, now({}, ['eu-main', 'us-main']))).toEqual([]);
    expect(describeInputChanges(signed, now({}, undefined))).toEqual([]);
  });

  it('names a case that appeared or was reopened, but not one resolved or acknowledged since', () => {
    const casesNow = { '12': 'open', '13': 'open', '14': 'resolved', '15': 'acknowledged', '16': 'open' };
    const casesThen = { '12': 'accepted', '14': 'open', '15': 'open', '16': 'resolved' };
    expect(describeInputChanges({ accounts: [{ ...base, cases: casesThen }] }, now({ cases: casesNow }))).toEqual([
      'eu-main: case #12 was reopened (accepted → open)',
      'eu-main: case #13 appeared (open)',
      'eu-main: case #16 was reopened (resolved → open)',
    ]);
    expect(describeInputChanges({ accounts: [{ ...base, cases: { '12': 'resolved' } }] }, now({ cases: { '12': 'acknowledged' } }))).toEqual(['eu-main: case #12 was reopened (resolved → acknowledged)']);
    expect(describeInputChanges({ accounts: [{ ...base, cases: { '12': 'accepted' } }] }, now({ cases: { '12': 'resolved' } }))).toEqual([]);
  });
});
