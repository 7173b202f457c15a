import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { MigrationError } from '../errors.js';
import type { Database } from './database.types.js';
import { viewDependencies, type ViewDefinition } from './views/index.js';

/**
 * The views of src/db/views/ in the database: each made from its definition, and made again when
 * the definition changes. `schema_views` keeps the sha256 of the definition each view was made
 * from; a view whose hash differs, or that is missing, is stale, and so is every view that reads
 * a stale one (PostgreSQL cannot drop a view another one reads).
 */

/** What the database holds of one view. */
export interface ViewState {
  name: string;
  /** The hash `schema_views` recorded for it; null when none (or no such table yet). */
  recordedSha256: string | null;
  /** Whether the view exists. */
  present: boolean;
}

/** The sha256 of a view's definition, as `schema_views.definition_sha256` keeps it. */
export function definitionSha256(view: ViewDefinition): string {
  return createHash('sha256').update(view.query).digest('hex');
}

/**
 * What the database holds of each of `views` (in their order). `recorded`: whether `schema_views`
 * exists yet (it comes with migration 2026-12-02T1000). Names resolve as `create view` resolves
 * them, through the search path.
 */
export async function readViewStates(db: Kysely<Database>, views: readonly ViewDefinition[], recorded: boolean): Promise<ViewState[]> {
  const names = views.map((view) => view.name);
  const hashes = recorded ? sql`(select s.definition_sha256 from schema_views s where s.name = v.name)` : sql`null::text`;
  const rows = await sql<{ name: string; recorded_sha256: string | null; present: boolean }>`
    select v.name, ${hashes} as recorded_sha256,
      exists (select from pg_class c where c.oid = to_regclass(quote_ident(v.name)) and c.relkind = 'v') as present
    from unnest(${names}::text[]) with ordinality as v(name, n)
    order by v.n`.execute(db);
  return rows.rows.map((row) => ({ name: row.name, recordedSha256: row.recorded_sha256, present: row.present }));
}

/**
 * The views to make again, in dependency order (`ordered` is): those missing or made from another
 * definition than this version's, and every view that reads one of them.
 */
export function staleViews(ordered: readonly ViewDefinition[], states: readonly ViewState[]): ViewDefinition[] {
  const state = new Map(states.map((s) => [s.name, s]));
  const stale = new Set<string>();
  for (const view of ordered) {
    const held = state.get(view.name);
    const changed = !held?.present || held.recordedSha256 !== definitionSha256(view);
    // The dependencies matter only once a view is stale (never, when the schema is current).
    if (changed || (stale.size > 0 && viewDependencies(view, ordered).some((name) => stale.has(name)))) stale.add(view.name);
  }
  return ordered.filter((view) => stale.has(view.name));
}

/** Drops those of `views` (in dependency order) that exist, each after the views that read it. */
export async function dropViews(trx: Kysely<Database>, views: readonly ViewDefinition[]): Promise<void> {
  for (const view of [...views].reverse()) {
    try {
      await sql`drop view if exists ${sql.id(view.name)}`.execute(trx);
    } catch (error) {
      // 2BP01: a view of someone's own (not in src/db/views/) reads it.
      if ((error as { code?: string }).code !== '2BP01') throw error;
      const detail = (error as { detail?: string }).detail;
      throw new MigrationError(
        `The view "${view.name}" must be made again, but other objects read it${detail ? ` (${detail.replace(/\n/g, '; ')})` : ''}: ` +
          'drop them, run "wallet-recon migrate", then create them again. Nothing was changed.',
        { cause: error },
      );
    }
  }
}

/**
 * Makes `views` (in dependency order, none of them existing) from their definitions and records
 * the hash of each.
 */
export async function createViews(trx: Kysely<Database>, views: readonly ViewDefinition[]): Promise<void> {
  for (const view of views) {
    try {
      await sql`create view ${sql.id(view.name)} as ${sql.raw(view.query)}`.execute(trx);
    } catch (error) {
      throw new MigrationError(
        `The view "${view.name}" could not be made from its definition (src/db/views/): ${(error as Error).message}. Nothing was changed.`,
        { cause: error },
      );
    }
    await sql`
      insert into schema_views (name, definition_sha256, applied_at) values (${view.name}, ${definitionSha256(view)}, now())
      on conflict (name) do update set definition_sha256 = excluded.definition_sha256, applied_at = excluded.applied_at`.execute(trx);
  }
}
