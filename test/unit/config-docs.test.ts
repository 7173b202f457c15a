import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigurationReference } from '../../scripts/config-reference.js';
import { envSchema } from '../../src/config/env-schema.js';

// docs/configuration.md is generated from the environment schema: it must be what the script writes now.
const file = path.join(import.meta.dirname, '..', '..', 'docs', 'configuration.md');

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` generates from the schema (run it after changing a variable)', () => {
    expect(readFileSync(file, 'utf8')).toBe(renderConfigurationReference());
  });

  it('documents every variable of the schema with its default', () => {
    const text = renderConfigurationReference();
    for (const name of Object.keys(envSchema.shape)) expect(text, name).toMatch(new RegExp(`\\n\\| \`${name}\``));
    expect(text).toContain('| `GATEWAY_PER_PAGE` | `100` |');
    expect(text).toContain('| `RECON_SCHEDULE` | `55 23 * * *` |');
  });
});
