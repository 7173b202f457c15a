import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl, { type Entry } from 'yauzl';
import { ZipFile } from 'yazl';
import { createWriteStream } from 'node:fs';
import { FixedClock } from '../../src/clock.js';
import { AFTER, DATES, MONTH, monthEnvironment, produceSignedMonth, STATEMENT_FILE, writeSigningKey } from '../helpers/evidence-month.js';
import { pdfTextRuns } from '../helpers/pdf-text.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;
let keyFile: string;

/** The PDF rendered to text by poppler's pdftotext, or undefined where poppler-utils is not installed. */
function renderPdfText(pdf: Buffer): string | undefined {
  const file = path.join(dir, 'roll-forward.pdf');
  writeFileSync(file, pdf);
  const run = spawnSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  return run.error === undefined && run.status === 0 ? run.stdout : undefined;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const cli = (...args: string[]) => runCliInProcess(args, env);
/** verify-pack with no database reachable and a configuration that would not even load. */
const verifyOffline = (...args: string[]) =>
  runCliInProcess(['verify-pack', ...args], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', RECON_TIMEZONE: 'Not/AZone', RECON_DATA_DIR: path.join(dir, 'no-such-dir'), RECON_CUTOFF: 'never' });

/** Every entry of a zip, by name, in the archive's order. */
async function unzip(file: string): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(file, { lazyEntries: true }, (e, z) => (e ? reject(e) : resolve(z))));
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const parts: Buffer[] = [];
        stream.on('data', (d: Buffer) => parts.push(d));
        stream.on('end', () => {
          entries.set(entry.fileName, Buffer.concat(parts));
          zip.readEntry();
        });
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

/** Writes a zip of these entries, in this order. */
async function zipOf(file: string, entries: Map<string, Buffer>): Promise<void> {
  const zip = new ZipFile();
  for (const [name, bytes] of entries) zip.addBuffer(bytes, name);
  const out = createWriteStream(file);
  zip.outputStream.pipe(out);
  zip.end();
  await new Promise<void>((resolve) => out.on('close', () => resolve()));
}

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-evidence-'));
  keyFile = writeSigningKey(dir);
  env = { DATABASE_URL: '', ...t.childEnv, ...monthEnvironment(dir, { RECON_SIGNING_KEY_FILE: keyFile }) };
  const clock = new FixedClock(AFTER);
  await produceSignedMonth(createTestContext(t, env, { clock }), clock, dir);
  await serveToCommands(t);
}, 180_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

// Each test runs the built CLI several times; on the embedded database each start takes seconds.
describe(`the evidence pack through the CLI (${backend})`, { timeout: 180_000 }, () => {
  it('exports a month of three approved dates: the manifest lists every file with its SHA-256, signed, and a second export is byte-identical', async () => {
    const out = path.join(dir, 'pack.zip');
    const exported = await cli('signoff', 'export', '--month', MONTH, '--out', out);
    expect(exported.stderr.replace(/^Database: .*\n?/m, '')).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain(`3 approved date(s) (${DATES.join(', ')})`);
    const entries = await unzip(out);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8')) as {
      files: Array<{ path: string; sha256: string; size: number }>;
      dates: string[];
      accounts: string[];
      tool: { name: string; version: string };
      signoffs: Array<{ id: number; business_date: string; report_path: string; report_sha256: string }>;
      chain: unknown[];
      signature: { status: string; publicKeyFingerprint: string };
      verify: string;
    };
    expect(manifest.dates).toEqual([...DATES]);
    expect(manifest.accounts).toEqual(['default', 'eu-bank']);
    expect(manifest.tool.name).toBe('wallet-recon');
    expect(manifest.signoffs.map((s) => s.business_date)).toEqual([...DATES]);
    expect(manifest.chain).toHaveLength(3);
    // Every entry but the manifest and its signature is listed, with the SHA-256 and size of its bytes.
    expect(manifest.files.map((f) => f.path).sort()).toEqual([...entries.keys()].filter((n) => n !== 'manifest.json' && n !== 'manifest.sig').sort());
    for (const f of manifest.files) expect({ path: f.path, sha256: sha256(entries.get(f.path)!), size: entries.get(f.path)!.length }).toEqual(f);
    expect(entries.get('manifest.sig')).toHaveLength(64);
    const der = (await import('node:crypto')).createPublicKey(readFileSync(keyFile)).export({ type: 'spki', format: 'der' });
    expect(manifest.signature).toMatchObject({ status: 'signed', publicKeyFingerprint: sha256(der) });
    // The statement file as imported, the books file as imported, each sealed report as sealed.
    const statementPath = manifest.files.find((f) => f.path.endsWith(`/${STATEMENT_FILE}`))!.path;
    expect(entries.get(statementPath)).toEqual(readFileSync(path.join(dir, STATEMENT_FILE)));
    expect(entries.get(manifest.files.find((f) => f.path.endsWith('/books-2026-10.csv'))!.path)).toEqual(readFileSync(path.join(dir, 'books-2026-10.csv')));
    for (const s of manifest.signoffs) expect(sha256(entries.get(s.report_path)!)).toBe(s.report_sha256);
    const cases = JSON.parse(entries.get(`dates/${DATES[1]}/cases.json`)!.toString()) as Array<{ events: Array<{ action: string; note: string | null }> }>;
    expect(cases[0]!.events.map((e) => e.action)).toEqual(['opened', 'seen', 'accepted']);
    // What explained the dates: the items and matches of each (none here), as files of their own.
    expect(JSON.parse(entries.get(`dates/${DATES[1]}/reconciling-items.json`)!.toString())).toEqual([]);
    expect(JSON.parse(entries.get(`dates/${DATES[1]}/entry-matches.json`)!.toString())).toEqual([]);

    // roll-forward.pdf: each account's closing balance per date beside the books', and each date's approver.
    const pdf = entries.get('roll-forward.pdf')!;
    const runs = pdfTextRuns(pdf);
    expect(runs).toEqual(expect.arrayContaining(['Account default', 'Account eu-bank', 'default EUR', 'default USD', 'eu-bank EUR']));
    // default EUR on the last date: 11,000.00 on the gateway, 10,876.55 in the books, no open items, 123.45 unexplained.
    const lastEur = runs.indexOf('2026-10-07', runs.indexOf('default EUR'));
    expect(runs.slice(lastEur, lastEur + 8)).toEqual(['2026-10-07', '12500.00', '-1500.00', '11000.00', '10876.55', '0.00', '123.45', 'break']);
    const bankLast = runs.indexOf('2026-10-07', runs.indexOf('eu-bank EUR'));
    expect(runs.slice(bankLast, bankLast + 4)).toEqual(['2026-10-07', expect.any(String), expect.any(String), '20592.50']);
    const signoffs = runs.slice(runs.indexOf('Sign-offs'));
    for (const date of DATES) {
      const at = signoffs.indexOf(date);
      expect(signoffs.slice(at, at + 6)).toEqual([date, expect.stringMatching(/^#\d+$/), 'anna', expect.stringMatching(/^2026-10-12 \d\d:\d\d UTC$/), 'ben', expect.stringMatching(/^2026-10-12 \d\d:\d\d UTC$/)]);
    }
    const rendered = renderPdfText(pdf);
    if (rendered === undefined) console.warn('pdftotext (poppler-utils) is not installed: roll-forward.pdf was read back from its own text only, not rendered.');
    else for (const text of ['11000.00', '10876.55', '20592.50', 'ben']) expect(rendered).toContain(text);

    const again = path.join(dir, 'pack-again.zip');
    expect((await cli('signoff', 'export', '--month', MONTH, '--out', again)).code).toBe(0);
    expect(sha256(readFileSync(again))).toBe(sha256(readFileSync(out)));
  });

  it('verify-pack exits 0 with no database reachable, naming the key fingerprint', async () => {
    const out = path.join(dir, 'pack.zip');
    const verified = await verifyOffline(out);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    const der = (await import('node:crypto')).createPublicKey(readFileSync(keyFile)).export({ type: 'spki', format: 'der' });
    expect(verified.stdout).toContain(`fingerprint ${sha256(der)}`);
    expect(verified.stdout).toContain('3 sign-off chain row(s) link');
    expect((await verifyOffline(out, '--public-key', path.join(dir, 'pub.pem'))).code).toBe(2);
    writeFileSync(path.join(dir, 'pub.pem'), (await import('node:crypto')).createPublicKey(readFileSync(keyFile)).export({ type: 'spki', format: 'pem' }));
    expect((await verifyOffline(out, '--public-key', path.join(dir, 'pub.pem'))).code).toBe(0);
  });

  it('verify-pack exits 1 naming a statement file with one byte flipped, and manifest.sig for another key', async () => {
    const entries = await unzip(path.join(dir, 'pack.zip'));
    const statementPath = [...entries.keys()].find((n) => n.endsWith(`/${STATEMENT_FILE}`))!;
    const flipped = new Map(entries);
    const bytes = Buffer.from(entries.get(statementPath)!);
    bytes[100] = bytes[100]! ^ 0x01;
    flipped.set(statementPath, bytes);
    await zipOf(path.join(dir, 'flipped.zip'), flipped);
    const verified = await verifyOffline(path.join(dir, 'flipped.zip'));
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain(`${statementPath}: its SHA-256 is`);

    const other = writeSigningKey(dir, 'other.pem');
    writeFileSync(path.join(dir, 'other-pub.pem'), (await import('node:crypto')).createPublicKey(readFileSync(other)).export({ type: 'spki', format: 'pem' }));
    const foreign = await verifyOffline(path.join(dir, 'pack.zip'), '--public-key', path.join(dir, 'other-pub.pem'));
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/^Pack does not hold: manifest\.sig: /);
  });

  it('verify-pack exits 2 for a file that is not a zip and a zip without manifest.json', async () => {
    writeFileSync(path.join(dir, 'not.zip'), 'hello');
    const notZip = await verifyOffline(path.join(dir, 'not.zip'));
    expect(notZip.code).toBe(2);
    expect(notZip.stderr).toContain('is not an evidence pack');
    await zipOf(path.join(dir, 'empty.zip'), new Map([['readme.txt', Buffer.from('hi')]]));
    const noManifest = await verifyOffline(path.join(dir, 'empty.zip'));
    expect(noManifest.code).toBe(2);
    expect(noManifest.stderr).toContain('holds no manifest.json');
  });

  it('refuses a date that is not approved (exit 2, naming it and its state) and writes nothing', async () => {
    const out = path.join(dir, 'refused.zip');
    const refused = await cli('signoff', 'export', '--date', '2026-10-08', '--out', out);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('2026-10-08 is not signed');
    expect(() => readFileSync(out)).toThrow();
  });
});
