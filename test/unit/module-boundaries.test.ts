import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.join(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** Every module a file imports (static, type-only and dynamic), as a path relative to src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((s) => path.relative(src, path.resolve(path.dirname(file), s)).replace(/\.js$/, '.ts'));
}

/** Imports from files under `folder` into anything matching `forbidden`. */
function crossings(folder: string, forbidden: RegExp): string[] {
  return sourceFiles(path.join(src, folder)).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden.test(target))
      .map((target) => `${path.relative(src, file)} -> ${target}`),
  );
}

describe('module boundaries', () => {
  it('keeps the gateway client free of the configuration (and of zod, yaml and cron that come with it)', () => {
    expect(crossings('gateway', /^config\.ts$/)).toEqual([]);
  });

  it('keeps the database layer below everything that uses it', () => {
    expect(crossings('db', /^(cases|cli|reconciliation|snapshot|scheduler|notifications|metrics|gateway|sandbox|signoff)\//)).toEqual([]);
  });

  it('keeps reconciliation and cases free of the command line', () => {
    expect(crossings('reconciliation', /^cli\//)).toEqual([]);
    expect(crossings('cases', /^cli\//)).toEqual([]);
  });

  it('keeps the sign-off domain (lock, seals, verification) free of the shells that use it', () => {
    expect(crossings('signoff', /^cli\//)).toEqual([]);
    // Roles are the one thing it reads from the console: who may prepare, approve, reopen.
    expect(crossings('signoff', /^console\/(?!roles\.ts$)/)).toEqual([]);
  });

  it('puts the lossless JSON helper where neither the gateway nor the books own it', () => {
    const users = sourceFiles(src).filter((f) => importsOf(f).includes('lossless-json.ts')).map((f) => path.relative(src, f).split(path.sep)[0]);
    expect(users).toEqual(expect.arrayContaining(['gateway', 'books']));
    expect(sourceFiles(src).filter((f) => path.basename(f) === 'lossless-json.ts').map((f) => path.relative(src, f))).toEqual(['lossless-json.ts']);
  });

  it('reaches the books only through their public entry, src/books/index.ts', () => {
    const outside = sourceFiles(src).filter((f) => !path.relative(src, f).startsWith(`books${path.sep}`));
    const deep = outside.flatMap((f) => importsOf(f).filter((t) => t.startsWith(`books${path.sep}`) && t !== path.join('books', 'index.ts')).map((t) => `${path.relative(src, f)} -> ${t}`));
    expect(deep).toEqual([]);
  });

  it('reaches the bank statements only through their public entry, src/statements/index.ts', () => {
    const outside = sourceFiles(src).filter((f) => !path.relative(src, f).startsWith(`statements${path.sep}`));
    const deep = outside.flatMap((f) => importsOf(f).filter((t) => t.startsWith(`statements${path.sep}`) && t !== path.join('statements', 'index.ts')).map((t) => `${path.relative(src, f)} -> ${t}`));
    expect(deep).toEqual([]);
    // The readers and proofs are pure: the database and the command line stay out of them.
    const pure = ['camt-reader.ts', 'mt940-reader.ts', 'statement-proof.ts', 'statement.ts', 'statement-fingerprint.ts', 'sample-statements.ts'];
    expect(pure.flatMap((name) => importsOf(path.join(src, 'statements', name)).filter((t) => /^(db|cli)\//.test(t)))).toEqual([]);
  });

  it('gives modules of the gateway and of the emulator names that say which is which', () => {
    // index.ts is each folder's public surface, by convention the same name everywhere.
    const names = (folder: string) => new Set(readdirSync(path.join(src, folder)).filter((n) => n.endsWith('.ts') && n !== 'index.ts'));
    const gateway = names('gateway');
    expect([...names('sandbox')].filter((n) => gateway.has(n))).toEqual([]);
  });
});
