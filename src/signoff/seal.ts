import { createHash } from 'node:crypto';
import { readSignoffReport } from '../db/signoff.repository.js';
import type { Database } from '../db/database.types.js';
import type { Kysely } from 'kysely';
import { SealMismatchError } from '../errors.js';

/** SHA-256 of a sealed report's bytes, as stored in `signoffs.report_sha256`. */
export function sealOf(html: string): string {
  return createHash('sha256').update(html, 'utf8').digest('hex');
}

export const SEAL_MISMATCH = 'This sealed report does not match its seal';

/** Whether sign-off `id`'s stored report still hashes to its seal (false when there is no such sign-off). */
export async function sealHolds(db: Kysely<Database>, id: number): Promise<boolean> {
  const report = await readSignoffReport(db, id);
  return report !== undefined && sealOf(report.html) === report.sha256;
}

/**
 * A sealed report as stored, after checking its bytes still hash to its seal; an altered one is
 * never served (SealMismatchError) — whoever could change the row could not also change what a
 * reader was promised. Undefined when there is no such sign-off.
 */
export async function readSealedReport(db: Kysely<Database>, id: number): Promise<{ html: string; sha256: string; businessDate: string } | undefined> {
  const report = await readSignoffReport(db, id);
  if (report === undefined) return undefined;
  if (sealOf(report.html) !== report.sha256) {
    throw new SealMismatchError(`${SEAL_MISMATCH}: sign-off #${id} of ${report.businessDate} was sealed with SHA-256 ${report.sha256}, its stored report now hashes to ${sealOf(report.html)}. Run "wallet-recon signoff verify" and restore the database from a backup.`);
  }
  return report;
}
