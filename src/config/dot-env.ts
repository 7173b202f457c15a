import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.js';

// NAME=value, optionally after `export ` (a file shared with a shell); the value may be quoted.
const SETTING_LINE = /^(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=(.*)$/;
const QUOTES = ['"', "'", '`'];

/** The variables of `.env` in `cwd`, if there is one; the environment wins over them. */
export function readDotEnv(cwd: string): Record<string, string> {
  const file = path.join(cwd, '.env');
  if (!existsSync(file)) return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`Could not read ${file}: ${(error as Error).message}`, [], { cause: error });
  }
  const problem = findMalformedLine(text);
  if (problem !== undefined) {
    // The line itself is not quoted: it may be a secret written without its name.
    const message = `${file}, line ${problem.line}, ${problem.what}: write one setting per line as NAME=value (such as RECON_TIMEZONE=Europe/Berlin), and start a comment with #`;
    throw new ConfigError(`${message}.`, [message]);
  }
  return parseEnv(text) as Record<string, string>;
}

/**
 * The first line that is not a setting, a comment or blank. Node's parser reads such a line as
 * the start of the next variable's name, so the next setting silently vanishes.
 */
function findMalformedLine(text: string): { line: number; what: string } | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SETTING_LINE.exec(line);
    if (!match) return { line: i + 1, what: 'is not a setting' };
    const value = match[1]!.trim();
    const quote = value[0];
    if (quote === undefined || !QUOTES.includes(quote) || value.indexOf(quote, 1) !== -1) continue;
    // A quoted value may span lines: it ends at the line holding its closing quote.
    const start = i;
    do i++;
    while (i < lines.length && !lines[i]!.includes(quote));
    if (i >= lines.length) return { line: start + 1, what: `opens a ${quote} quote that no later line closes` };
  }
  return undefined;
}
