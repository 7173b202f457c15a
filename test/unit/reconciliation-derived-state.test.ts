import { describe, expect, it } from 'vitest';
import { stateOnClock } from '../../src/db/state-on-clock.js';
import { booksAwaitedOn, statementAwaitedOn, statementDueAt } from '../../src/reconciliation/awaited-deadlines.js';
import {
  addCounts,
  countByStatus,
  countUnmatched,
  isAccepted,
  RECONCILIATION_STATUSES,
  reconciliationExitCode,
  resultColumns,
  type ReconciliationResult,
} from '../../src/reconciliation/reconciliation-result.js';

// Cut-off 18:00 in Berlin (17:00Z in November): books due 6 h later, statements 30 h later.
const config = { timezone: 'Europe/Berlin', cutoff: '18:00', captureWindowMs: 3_600_000, booksDeadlineMs: 6 * 3_600_000, statementDeadlineMs: 30 * 3_600_000 };
const at = (iso: string) => ({ clock: { now: () => new Date(iso) }, config }) as never;

describe('books and statements awaited until their deadline, on the injected clock', () => {
  it('awaits the books until RECON_BOOKS_DEADLINE after the cut-off, then misses them', () => {
    expect(booksAwaitedOn(at('2026-11-20T22:59:59.999Z'), '2026-11-20')).toBe(true);
    expect(booksAwaitedOn(at('2026-11-20T23:00:00.000Z'), '2026-11-20')).toBe(false);
  });

  it('awaits a bank statement until RECON_STATEMENT_DEADLINE after the cut-off, then has none', () => {
    expect(statementAwaitedOn(at('2026-11-21T22:59:59.999Z'), '2026-11-20')).toBe(true);
    expect(statementAwaitedOn(at('2026-11-21T23:00:00.000Z'), '2026-11-20')).toBe(false);
    expect(statementDueAt(at('2026-11-21T12:00:00.000Z'), '2026-11-20')).toEqual(new Date('2026-11-21T23:00:00.000Z'));
  });

  it('reads a date’s books state on the application’s clock, not the database’s', () => {
    const due = new Date('2026-11-20T23:00:00Z');
    expect(stateOnClock({ state: 'awaiting_books', books_deadline_at: due }, new Date('2026-11-20T22:59:59Z'))).toBe('awaiting_books');
    expect(stateOnClock({ state: 'awaiting_books', books_deadline_at: due }, due)).toBe('no_books');
    // The database's clock ran ahead: the application's clock still awaits.
    expect(stateOnClock({ state: 'no_books', books_deadline_at: due }, new Date('2026-11-20T22:00:00Z'))).toBe('awaiting_books');
    expect(stateOnClock({ state: 'no_books', books_deadline_at: null }, new Date('2026-11-20T22:00:00Z'))).toBe('no_books');
    expect(stateOnClock({ state: 'owed', books_deadline_at: due }, new Date('2026-11-21T00:00:00Z'))).toBe('owed');
  });
});

describe('counts and exit codes of results', () => {
  const counts = (statuses: ReconciliationResult['status'][]) => countByStatus(statuses.map((status) => ({ status })));

  it('counts every status, zero where absent', () => {
    const c = counts(['matched', 'break', 'break', 'awaiting_books']);
    expect(Object.keys(c)).toEqual([...RECONCILIATION_STATUSES]);
    expect(c).toMatchObject({ matched: 1, break: 2, awaiting_books: 1, no_snapshot: 0, sequence_gap: 0 });
    expect(addCounts(c, counts(['break', 'no_books']))).toMatchObject({ matched: 1, break: 3, no_books: 1, awaiting_books: 1, disappeared: 0 });
  });

  it('exits 0 when everything matched, is explained or immaterial, or still waits, 3 on any other status', () => {
    expect(reconciliationExitCode(counts([]))).toBe(0);
    expect(reconciliationExitCode(counts(['matched', 'explained', 'immaterial', 'awaiting_books', 'awaiting_statement']))).toBe(0);
    for (const status of RECONCILIATION_STATUSES.filter((s) => !['matched', 'explained', 'immaterial', 'awaiting_books', 'awaiting_statement'].includes(s))) {
      expect([status, reconciliationExitCode(counts(['matched', status]))]).toEqual([status, 3]);
    }
  });

  it('counts as unmatched what is neither matched nor waiting', () => {
    expect(countUnmatched(counts(['matched', 'awaiting_books', 'awaiting_statement']))).toBe(0);
    expect(countUnmatched(counts(['break', 'break', 'no_statement', 'matched', 'awaiting_books', 'sequence_gap']))).toBe(4);
  });

  it('treats only an accepted case as accepted', () => {
    expect(isAccepted({ case: { id: 1, state: 'accepted', ageDays: 3, acceptedUntil: null } })).toBe(true);
    expect(isAccepted({ case: { id: 1, state: 'open', ageDays: 3, acceptedUntil: null } })).toBe(false);
    expect(isAccepted({ case: null })).toBe(false);
    expect(isAccepted({})).toBe(false);
  });
});

describe('a result as stored and published (resultColumns)', () => {
  const result: ReconciliationResult = {
    account: 'eu-main',
    businessDate: '2026-11-20',
    currency: 'KWD',
    gatewayBalance: 9007199254740993n,
    singleBalance: null,
    expectedBalance: -5n,
    previousBalance: 0n,
    movement: 9007199254740993n,
    difference: 9007199254740998n,
    status: 'break',
    runId: 7,
  };

  it('writes amounts as exact digit strings and fills defaults: the currency’s scale, gateway source', () => {
    expect(resultColumns(result)).toEqual({
      account: 'eu-main',
      business_date: '2026-11-20',
      currency: 'KWD',
      gateway_balance: '9007199254740993',
      single_balance: null,
      expected_balance: '-5',
      previous_balance: '0',
      movement: '9007199254740993',
      difference: '9007199254740998',
      status: 'break',
      run_id: 7,
      books_import_id: null,
      note: null,
      scale: 3,
      source: 'gateway',
      bank_statement_id: null,
      items_total: null,
      unexplained: null,
    });
  });

  it('keeps what the result states, and no scale for an account-level result', () => {
    expect(resultColumns({ ...result, scale: 0, booksImportId: 4, note: 'n', source: 'bank', bankStatementId: 9 })).toMatchObject({ scale: 0, books_import_id: 4, note: 'n', source: 'bank', bank_statement_id: 9 });
    expect(resultColumns({ ...result, currency: null, status: 'no_snapshot' }).scale).toBeNull();
    expect(resultColumns({ ...result, currency: 'XAU' }).scale).toBeNull();
  });
});
