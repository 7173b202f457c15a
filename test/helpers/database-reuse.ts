/**
 * Emptying a test database a file is done with, so the next file in the worker can have it instead
 * of a new copy of the template: on the server `CREATE DATABASE … TEMPLATE` costs about half a
 * second of disk; embedded, copying the template and opening PGlite on it about 0.6 s of CPU.
 * Emptying takes a few tens of milliseconds. A database is reused only when its shape (schema,
 * migration ledger, views, other schemas) is still the template's: a file that changed any of it
 * gets its database dropped, never handed on.
 */

/** Runs one SQL text and returns its rows: a pg client's or a Kysely's query, adapted. */
export type RunQuery = <Row>(text: string) => Promise<Row[]>;

/** The schema, migration ledger and views' hashes of a database, as one hash: what emptying must leave as the template made it. */
const SHAPE_QUERY = `
  select md5(string_agg(item, E'\n' order by item)) as shape from (
    select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') as item
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
     where n.nspname = 'public'
    union all select 'relation ' || c.relname || ' ' || c.relkind::text from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'
    union all select 'constraint ' || conname || ' ' || pg_get_constraintdef(o.oid) from pg_constraint o join pg_namespace n on n.oid = o.connamespace where n.nspname = 'public'
    union all select 'index ' || indexrelid::regclass::text || ' ' || pg_get_indexdef(indexrelid) from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'
    union all select 'trigger ' || tgname || ' ' || tgenabled::text || ' ' || pg_get_triggerdef(t.oid) from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and not t.tgisinternal
    union all select 'function ' || p.proname || ' ' || md5(pg_get_functiondef(p.oid)) from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'
    union all select 'view ' || c.relname || ' ' || md5(pg_get_viewdef(c.oid)) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('v', 'm')
    union all select 'schema ' || nspname from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'
    union all select 'migration ' || name from kysely_migration
    union all select 'view definition ' || name || ' ' || definition_sha256 from schema_views
  ) items`;

/** The shape of the database `run` queries (see SHAPE_QUERY). */
export async function shapeOf(run: RunQuery): Promise<string> {
  return (await run<{ shape: string }>(SHAPE_QUERY))[0]!.shape;
}

/**
 * Empties the database `run` queries for the next file: every table's rows (the ledgers aside),
 * the job queue's jobs where it has one, and every sequence back to its start, in one
 * transaction with triggers off (the append-only tables refuse DELETE otherwise). Returns false,
 * leaving it to be dropped, when its shape is not `templateShape` or emptying failed.
 */
export async function emptyForReuse(run: RunQuery, templateShape: string): Promise<boolean> {
  if ((await shapeOf(run)) !== templateShape) return false;
  try {
    await run('begin');
    await run("set local session_replication_role = 'replica'");
    const tables = await run<{ name: string }>(
      `select quote_ident(c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relname not in ('kysely_migration', 'kysely_migration_lock', 'schema_views')`,
    );
    for (const table of tables) await run(`delete from ${table.name}`);
    // The job queue's jobs too: a worker of the next file must not find this file's nights.
    if ((await run<{ found: boolean }>("select to_regclass('pgboss.job') is not null as found"))[0]?.found === true) {
      await run('delete from pgboss.job; delete from pgboss.archive; delete from pgboss.schedule');
    }
    await run(`select setval(s.seqrelid, s.seqstart, false) from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'`);
    await run('commit');
    return true;
  } catch {
    await run('rollback').catch(() => undefined);
    return false;
  }
}
