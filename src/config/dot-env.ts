import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.js';

/** The variables of `.env` in `cwd`, if there is one; the environment wins over them. */
export function readDotEnv(cwd: string): Record<string, string> {
  const file = path.join(cwd, '.env');
  if (!existsSync(file)) return {};
  try {
    return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    throw new ConfigError(`Could not read ${file}: ${(error as Error).message}`, [], { cause: error });
  }
}
