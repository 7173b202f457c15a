import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderConfigurationReference } from './config-reference.js';

// `npm run docs:config`: writes docs/configuration.md from the environment schema.
const file = path.join(import.meta.dirname, '..', 'docs', 'configuration.md');
writeFileSync(file, renderConfigurationReference());
console.log(`Wrote ${path.relative(process.cwd(), file)}.`);
