import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReconciliationState } from '../../src/db/database.types.js';
import { reconciliationStatus } from '../../src/db/views/reconciliation-status.js';
import { dayStateSettled, resultStatusSettles, type ResultStatusValue } from '../../src/signoff/settle-check.js';

// Every state the status view can produce, read from its definition: a state added to the view
// later is met here, and fails until the settle check classifies it.
const stateColumn = /case([\s\S]*?)end as state/.exec(reconciliationStatus.query)![1]!;
const viewStates = [...stateColumn.matchAll(/(?:then|else) '([a-z_]+)'/g)].map((m) => m[1]!);
// Every status the database lets a result carry (the last migration that sets the check).
const migration = readFileSync(path.join(import.meta.dirname, '..', '..', 'migrations', '2026-12-02T1100_statuses-for-open-work.ts'), 'utf8');
const listed = (name: string) => [...migration.slice(migration.indexOf(`const ${name} = [`)).split('];')[0]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
const resultStatuses = [...listed('STATUSES'), ...listed('NEW_STATUSES')];

describe('which states can be signed', () => {
  it('reads the states the status view produces', () => {
    expect(new Set(viewStates)).toEqual(new Set(['owed', 'awaiting_statement', 'not_captured', 'no_books', 'awaiting_books', 'current']));
  });

  it.each(viewStates)('classifies the day state %s as settled or not', (state) => {
    expect(typeof dayStateSettled(state as ReconciliationState)).toBe('boolean');
  });

  it('signs only a current day: awaiting_statement, awaiting_books, no_books, owed and not_captured block', () => {
    expect(viewStates.filter((s) => dayStateSettled(s as ReconciliationState))).toEqual(['current']);
  });

  it('reads every result status the database allows, the ones open work will produce included', () => {
    expect(resultStatuses).toEqual(expect.arrayContaining(['matched', 'break', 'awaiting_statement', 'explained', 'immaterial', 'conflicting_statements']));
    expect(resultStatuses.length).toBeGreaterThanOrEqual(17);
  });

  it.each(resultStatuses)('classifies the result status %s as final, exception or pending', (status) => {
    expect(['final', 'exception', 'pending']).toContain(resultStatusSettles(status as ResultStatusValue));
  });

  it('takes explained and immaterial as final, conflicting_statements and awaited inputs as pending, a break as an exception its case settles', () => {
    expect(resultStatusSettles('explained')).toBe('final');
    expect(resultStatusSettles('immaterial')).toBe('final');
    expect(resultStatusSettles('matched')).toBe('final');
    expect(resultStatusSettles('conflicting_statements')).toBe('pending');
    expect(resultStatusSettles('awaiting_statement')).toBe('pending');
    expect(resultStatusSettles('awaiting_books')).toBe('pending');
    expect(resultStatusSettles('break')).toBe('exception');
  });
});
