import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { FIRST_MIGRATION_WITHOUT_VIEWS } from '../../src/db/migrate.js';
import { definitionSha256, staleViews, type ViewState } from '../../src/db/migrate-views.js';
import { inDependencyOrder, viewDependencies, VIEWS, type ViewDefinition } from '../../src/db/views/index.js';

const MIGRATIONS_FOLDER = new URL('../../migrations/', import.meta.url);
const VIEWS_FOLDER = new URL('../../src/db/views/', import.meta.url);
/** What makes a view, in any case and spacing. */
const MAKES_A_VIEW = /\bcreate\s+(or\s+replace\s+)?view\b/i;

const view = (name: string, query: string): ViewDefinition => ({ name, query });

describe('the view definitions of src/db/views/', () => {
  it('lists every view file of the folder once, each defining the view its file is named for', () => {
    const support = ['index.ts', 'view-definition.ts', 'view-order.ts'];
    const files = readdirSync(VIEWS_FOLDER).filter((f) => f.endsWith('.ts') && !support.includes(f)).sort();
    expect(VIEWS.map((v) => `${v.name.replaceAll('_', '-')}.ts`).sort()).toEqual(files);
    expect(new Set(VIEWS.map((v) => v.name)).size).toBe(VIEWS.length);
  });

  it('says in each file what question its view answers', () => {
    for (const v of VIEWS) {
      const text = readFileSync(new URL(`${v.name.replaceAll('_', '-')}.ts`, VIEWS_FOLDER), 'utf8');
      expect(text, v.name).toMatch(/\/\*\*\s*\n\s*\* [A-Z][^?]*\?/);
    }
  });

  it('orders the views so that each comes after every view it reads', () => {
    const ordered = inDependencyOrder(VIEWS).map((v) => v.name);
    expect(ordered).toHaveLength(VIEWS.length);
    for (const v of VIEWS) {
      for (const dependency of viewDependencies(v, VIEWS)) expect(ordered.indexOf(dependency), `${v.name} reads ${dependency}`).toBeLessThan(ordered.indexOf(v.name));
    }
    expect(viewDependencies(VIEWS.find((v) => v.name === 'daily_balances')!, VIEWS)).toEqual(['authoritative_runs']);
  });

  it('finds a dependency only as a whole name, and refuses views that read each other', () => {
    const base = view('base', 'select 1 as x');
    expect(viewDependencies(view('wide', 'select * from base_archive, rebase'), [base])).toEqual([]);
    expect(viewDependencies(view('top', 'select x from "base" b'), [base])).toEqual(['base']);
    expect(inDependencyOrder([view('top', 'select x from middle'), view('middle', 'select x from base'), base]).map((v) => v.name)).toEqual(['base', 'middle', 'top']);
    expect(() => inDependencyOrder([view('a', 'select * from b'), view('b', 'select * from a')])).toThrow(/read each other in a circle/);
  });
});

describe('which views migrate makes again', () => {
  const ordered = inDependencyOrder(VIEWS);
  const current = (): ViewState[] => ordered.map((v) => ({ name: v.name, recordedSha256: definitionSha256(v), present: true }));

  it('none when every view exists as its definition says', () => {
    expect(staleViews(ordered, current())).toEqual([]);
  });

  it('a changed view and every view that reads it, in dependency order; the others are left alone', () => {
    const states = current().map((s) => (s.name === 'authoritative_runs' ? { ...s, recordedSha256: '0'.repeat(64) } : s));
    expect(staleViews(ordered, states).map((v) => v.name)).toEqual(['authoritative_runs', 'balance_history', 'capture_days', 'daily_balances']);
    const leaf = current().map((s) => (s.name === 'locked_dates' ? { ...s, recordedSha256: null } : s));
    expect(staleViews(ordered, leaf).map((v) => v.name)).toEqual(['locked_dates']);
  });

  it('a view that is missing, even with its hash recorded', () => {
    const states = current().map((s) => (s.name === 'daily_balances' ? { ...s, present: false } : s));
    expect(staleViews(ordered, states).map((v) => v.name)).toEqual(['daily_balances']);
  });

  it('hashes the whole definition: a change of one character is a change', () => {
    const v = VIEWS[0]!;
    expect(definitionSha256(v)).toMatch(/^[0-9a-f]{64}$/);
    expect(definitionSha256({ ...v, query: `${v.query} ` })).not.toBe(definitionSha256(v));
  });
});

describe('migrations from the one that moved the views into files on', () => {
  const files = readdirSync(MIGRATIONS_FOLDER).filter((f) => f !== 'index.ts' && f.endsWith('.ts'));

  it('names an existing migration as the first without views', () => {
    expect(Object.keys(MIGRATIONS)).toContain(FIRST_MIGRATION_WITHOUT_VIEWS);
  });

  it('make no view: views are changed in src/db/views/', () => {
    // The check finds what it looks for: the older migrations made views.
    expect(files.filter((f) => f < FIRST_MIGRATION_WITHOUT_VIEWS && MAKES_A_VIEW.test(readFileSync(new URL(f, MIGRATIONS_FOLDER), 'utf8'))).length).toBeGreaterThan(10);
    expect(MAKES_A_VIEW.test('CREATE  OR\n REPLACE VIEW x as select 1') && MAKES_A_VIEW.test('Create View x as select 1')).toBe(true);
    const offenders = files.filter((f) => f >= FIRST_MIGRATION_WITHOUT_VIEWS && MAKES_A_VIEW.test(readFileSync(new URL(f, MIGRATIONS_FOLDER), 'utf8')));
    expect(offenders, 'a migration that makes a view: change the view in src/db/views/ instead (docs/development.md)').toEqual([]);
  });
});
