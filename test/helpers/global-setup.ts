import pg from 'pg';

/** With TEST_DATABASE_URL, fail fast when the server is unreachable, and sweep databases left by killed runs. */
export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`TEST_DATABASE_URL is set but the server does not answer: ${(error as Error).message}`);
  }
  try {
    const stale = await client.query<{ datname: string }>(
      `select datname from pg_database where datname like 'wr_test_%' and datname not in (select datname from pg_stat_activity where datname is not null)`,
    );
    for (const row of stale.rows) await client.query(`drop database if exists "${row.datname}"`);
  } finally {
    await client.end();
  }
}
