import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { removeScratchFolder } from './scratch-folder.js';
import { dropRunDatabases, ensureEmbeddedTemplate, ensureServerTemplate, sweepStaleTestDatabases, templateKey, withClient } from './database-templates.js';

/**
 * Prepares the databases test files copy (see database-templates.ts) and gives their names to
 * the tests (`inject`). With TEST_DATABASE_URL, fails fast when the server is unreachable and
 * sweeps databases left by killed runs (old ones only: another run may be going on beside
 * this one). The embedded template is made whatever the backend: some files test the
 * embedded database on purpose.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const key = templateKey();
  const url = process.env.TEST_DATABASE_URL;
  const [embedded, server] = await Promise.all([ensureEmbeddedTemplate(key), url ? prepareServer(url, key) : Promise.resolve('')]);
  project.provide('embeddedTemplate', embedded);
  project.provide('serverTemplate', server);
  return async () => {
    removeScratchFolder();
    if (url) await withClient(url, dropRunDatabases);
  };
}

async function prepareServer(url: string, key: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`TEST_DATABASE_URL is set but the server does not answer: ${(error as Error).message}`);
  }
  try {
    await sweepStaleTestDatabases(client);
    return await ensureServerTemplate(client, url, key);
  } finally {
    await client.end();
  }
}
