import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { MIGRATION_NAMES } from '../../src/db/migration-names.js';

describe('the migration list', () => {
  it('names every migration file of the folder, in file-name order, with its up and down', () => {
    const files = readdirSync(new URL('../../migrations/', import.meta.url))
      .filter((f) => f !== 'index.ts' && f.endsWith('.ts'))
      .map((f) => f.slice(0, -'.ts'.length))
      .sort();
    expect(Object.keys(MIGRATIONS)).toEqual(files);
    for (const [name, migration] of Object.entries(MIGRATIONS)) {
      expect(typeof migration.up, name).toBe('function');
      expect(typeof migration.down, name).toBe('function');
    }
  });

  it('is named, in the same order, by the list the schema check reads (which loads no migration)', () => {
    expect(MIGRATION_NAMES).toEqual(Object.keys(MIGRATIONS));
  });
});
