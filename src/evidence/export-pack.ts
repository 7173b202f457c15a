import { sign, createPublicKey } from 'node:crypto';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../app-context.js';
import {
  findSignoffRecord,
  listBooksImportsOfDate,
  listCasesOfDate,
  listItemsAndMatchesOfDate,
  listChainRowsBetween,
  listChainRowsOfDates,
  listDatesWithResults,
  listResultsOfDate,
  listRollForwardPage,
  listSignaturesOf,
  listStepsOf,
  listStatementsOfDate,
} from '../db/evidence-pack.repository.js';
import { listSignoffsOfDate, readSignoffReport } from '../db/signoff.repository.js';
import { readStoredFile } from '../db/stored-file.repository.js';
import { ReconError, UsageError } from '../errors.js';
import { signoffStateOf } from '../signoff/signoff-service.js';
import { problemsToShow } from '../signoff/signoff-integrity.js';
import { loadSigningKey } from '../signoff/signing.js';
import { PackArchive } from './pack-archive.js';
import { fingerprintOf, MANIFEST, PUBLIC_KEY, SIGNATURE, VERIFY_TEXT, type PackManifest, type PackSignoff } from './pack-manifest.js';
import { renderRollForward, type RollForwardSignoff } from './roll-forward-pdf.js';

/** An export the dates do not allow (a date not approved, no dates at all): nothing was written. */
export class PackRefusedError extends ReconError {
  override readonly code = 'E_PACK_REFUSED';
  override readonly exitCode = 2;
}

export interface ExportPackRequest {
  date?: string;
  /** YYYY-MM */
  month?: string;
  /** Export a month's approved dates and leave out the others (else any date not approved refuses the export). */
  partial?: boolean;
  out: string;
}

export interface ExportPackOutcome {
  out: string;
  dates: string[];
  leftOut: Array<{ date: string; state: string }>;
  files: number;
  signed: boolean;
  publicKeyFingerprint: string | null;
}

/** How many accounts the roll-forward reads at once: a month of two accounts × 50 currencies is a few thousand rows, whatever the number of accounts. */
const ROLL_FORWARD_ACCOUNTS = 2;

const json = (value: unknown) => `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`;
const safeName = (name: string) => path.basename(name).replace(/[^A-Za-z0-9._-]/g, '_') || 'file';

/** The wallet-recon version the pack names as its tool (the nearest package.json). */
function toolVersion(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      if (path.dirname(dir) === dir) return 'unknown';
    }
  }
}

/** The business dates a request covers, each with its sign-off state. */
async function datesOf(ctx: AppContext, request: ExportPackRequest): Promise<Array<{ date: string; state: string }>> {
  let dates: string[];
  if (request.date !== undefined) dates = [request.date];
  else {
    const month = request.month!;
    const last = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).toISOString().slice(0, 10);
    dates = await listDatesWithResults(ctx.database.db, `${month}-01`, last);
    if (dates.length === 0) throw new PackRefusedError(`${month} has no business date with results: there is nothing to export. Nothing was written.`);
  }
  const states = [];
  for (const date of dates) states.push({ date, state: (await signoffStateOf(ctx, date)).state });
  return states;
}

/**
 * Writes the evidence pack of approved business dates to `out`: each date's sealed reports with
 * their inputs, approvals, reopenings and signatures, its results, cases with their events, books
 * imports and bank statements with their proofs, the original bytes of the files they were read
 * from, roll-forward.pdf, and manifest.json (every file's SHA-256, the sign-off chain rows from the
 * first covered to the last) signed with RECON_SIGNING_KEY_FILE into manifest.sig. A date not
 * approved refuses the export (unless `partial`, for a month); nothing is written then. The same
 * data gives the same bytes. Written to a temporary file beside `out`, renamed when complete.
 */
export async function exportEvidencePack(ctx: AppContext, request: ExportPackRequest): Promise<ExportPackOutcome> {
  if ((request.date === undefined) === (request.month === undefined)) throw new UsageError('signoff export needs exactly one of --date YYYY-MM-DD or --month YYYY-MM.');
  if (request.partial === true && request.month === undefined) throw new UsageError('--partial is for --month: a single --date is exported only when it is approved.');
  const db = ctx.database.db;
  const states = await datesOf(ctx, request);
  const leftOut = states.filter((s) => s.state !== 'approved');
  const dates = states.filter((s) => s.state === 'approved').map((s) => s.date);
  if (leftOut.length > 0 && request.partial !== true) {
    throw new PackRefusedError(
      `Only approved dates go into an evidence pack, and ${leftOut.map((s) => `${s.date} is ${s.state}`).join(', ')}. Nothing was written.${request.month !== undefined && dates.length > 0 ? ' Give --partial to export the approved dates only.' : ''}`,
    );
  }
  // Only what verifies is handed to an auditor: a date whose sign-off does not verify is refused whole.
  const standing = (await Promise.all(dates.map(async (date) => (await signoffStateOf(ctx, date)).current?.id))).filter((id): id is number => id !== undefined);
  const broken = [...(await problemsToShow(db, ctx.config, standing)).values()];
  if (broken.length > 0) throw new PackRefusedError(`This sign-off does not verify: ${broken[0]}. Nothing was written: run "wallet-recon signoff verify" and restore the database from a backup.`);
  if (dates.length === 0) throw new PackRefusedError(`No date of ${request.month} is approved (${leftOut.map((s) => `${s.date} ${s.state}`).join(', ')}): there is nothing to export. Nothing was written.`);
  const key = loadSigningKey(ctx.config);

  const temporary = path.join(path.dirname(path.resolve(request.out)), `.${path.basename(request.out)}.${process.pid}.partial`);
  const pack = new PackArchive(temporary);
  try {
    const signoffs: PackSignoff[] = [];
    const rollForwardSignoffs: RollForwardSignoff[] = [];
    const accounts = new Set<string>();
    const storedFiles = new Map<string, string>();
    const fileOf = (dir: string, sha256: string | null, name: string | null) => {
      if (sha256 === null) return null;
      const at = `files/${dir}/${sha256}/${safeName(name ?? sha256)}`;
      if (!storedFiles.has(at)) storedFiles.set(at, sha256);
      return at;
    };
    const chainOfDates = await listChainRowsOfDates(db, dates);
    for (const date of dates) {
      const history = (await listSignoffsOfDate(db, date)).reverse();
      for (const s of history) {
        const base = `dates/${date}/signoffs/${s.id}`;
        const report = (await readSignoffReport(db, s.id))!;
        await pack.add(`${base}/report.html`, report.html);
        const record = await findSignoffRecord(db, s.id);
        await pack.add(`${base}/signoff.json`, json({ ...record, signatures: await listSignaturesOf(db, [s.id]), steps: await listStepsOf(db, s.id) }));
        const row = chainOfDates.find((c) => c.id === s.id);
        if (row !== undefined) signoffs.push({ id: s.id, business_date: date, report_path: `${base}/report.html`, report_sha256: s.reportSha256, prev_hash: row.prev_hash, seal_hash: row.seal_hash, approval_hash: row.approval_hash });
        if (s.approvedBy !== null && s.reopenedAt === null && s.invalidatedAt === null) {
          for (const account of s.accountSet) accounts.add(account);
          rollForwardSignoffs.push({ id: s.id, businessDate: date, preparedBy: s.preparedBy, preparedAt: s.preparedAt, approvedBy: s.approvedBy, approvedAt: s.approvedAt });
        }
      }
      await pack.add(`dates/${date}/results.json`, json(await listResultsOfDate(db, date)));
      await pack.add(`dates/${date}/cases.json`, json(await listCasesOfDate(db, date)));
      const explanation = await listItemsAndMatchesOfDate(db, date);
      await pack.add(`dates/${date}/reconciling-items.json`, json(explanation.items));
      await pack.add(`dates/${date}/entry-matches.json`, json(explanation.matches));
      const books = (await listBooksImportsOfDate(db, date)).map((b) => ({ ...b, pack_path: fileOf('books', b.file_sha256, b.file_name) }));
      await pack.add(`dates/${date}/books-imports.json`, json(books));
      const statements = (await listStatementsOfDate(db, date)).map((s) => ({ ...s, pack_path: fileOf('bank-statements', s.file_sha256, s.file_name) }));
      await pack.add(`dates/${date}/bank-statements.json`, json(statements));
    }
    for (const at of [...storedFiles.keys()].sort()) await pack.add(at, readStoredFile(db, storedFiles.get(at)!));

    async function* rollForwardRows() {
      let after: string | null = null;
      for (;;) {
        const page = await listRollForwardPage(db, dates, after, ROLL_FORWARD_ACCOUNTS);
        if (page.length === 0) return;
        yield page;
        after = page.at(-1)!.account;
      }
    }
    await pack.add('roll-forward.pdf', renderRollForward({ dates, timezone: ctx.config.timezone, rows: rollForwardRows(), signoffs: rollForwardSignoffs }));

    const fingerprint = key === undefined ? null : fingerprintOf(createPublicKey(key.privateKey));
    if (key !== undefined) await pack.add(PUBLIC_KEY, createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' }).toString());
    const chain = chainOfDates.length === 0 ? [] : await listChainRowsBetween(db, chainOfDates[0]!.chain_seq, chainOfDates.at(-1)!.chain_seq);
    const manifest: PackManifest = {
      format: 'wallet-recon evidence pack 1',
      tool: { name: 'wallet-recon', version: toolVersion() },
      dates,
      accounts: [...accounts].sort(),
      timezone: ctx.config.timezone,
      signoffs,
      chain,
      signature: { status: key === undefined ? 'unsigned' : 'signed', algorithm: key === undefined ? null : 'Ed25519', publicKeyFingerprint: fingerprint },
      files: pack.files,
      verify: VERIFY_TEXT,
    };
    const manifestBytes = Buffer.from(json(manifest), 'utf8');
    await pack.add(MANIFEST, manifestBytes, false);
    if (key !== undefined) await pack.add(SIGNATURE, sign(null, manifestBytes, key.privateKey), false);
    await pack.finish();
    renameSync(temporary, request.out);
    return { out: request.out, dates, leftOut, files: pack.files.length, signed: key !== undefined, publicKeyFingerprint: fingerprint };
  } catch (error) {
    await pack.abort();
    rmSync(temporary, { force: true });
    throw error;
  }
}
