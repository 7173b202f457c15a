import type { Command } from 'commander';
import { requireDate } from '../signoff/signoff-service.js';
import { UsageError } from '../errors.js';
import type { CliRuntime } from './runtime.js';

/** `wallet-recon signoff export`: the auditor's evidence pack of approved dates. */
export function registerSignoffExport(signoff: Command, runtime: CliRuntime): void {
  signoff
    .command('export')
    .description("write the evidence pack (zip) of an approved date or a month's approved dates, signed with RECON_SIGNING_KEY_FILE")
    .option('--date <date>', 'business date YYYY-MM-DD (it must be approved)')
    .option('--month <month>', 'a month YYYY-MM: every date with results (all must be approved, or give --partial)')
    .requiredOption('--out <file>', 'the zip to write')
    .option('--partial', "with --month: export the approved dates and leave out (naming them) the others")
    .addHelpText(
      'after',
      `
Examples:
  wallet-recon signoff export --date 2026-11-20 --out evidence-2026-11-20.zip
  wallet-recon signoff export --month 2026-11 --out evidence-2026-11.zip [--partial]

The pack holds manifest.json (every file's SHA-256, the sign-off chain rows), manifest.sig and
public-key.pem (with RECON_SIGNING_KEY_FILE; else it says it is unsigned), each date's sealed
reports, inputs, approvals and reopenings, results, cases with their events, books imports and
bank statements with the original bytes of their files, and roll-forward.pdf. The same data
gives the same bytes. Check it with: wallet-recon verify-pack FILE.zip

Exit codes: 0 written, 1 an error, 2 usage error or a date not approved (nothing written).`,
    )
    .action(async (opts: { date?: string; month?: string; out: string; partial?: boolean }) => {
      if ((opts.date === undefined) === (opts.month === undefined)) throw new UsageError('signoff export needs exactly one of --date YYYY-MM-DD or --month YYYY-MM.');
      const date = opts.date === undefined ? undefined : requireDate(opts.date, '--date');
      if (opts.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month)) throw new UsageError(`--month ${JSON.stringify(opts.month)} is not a month: use YYYY-MM, e.g. 2026-11.`);
      await runtime.withContext('wallet-recon signoff export', {}, async (ctx) => {
        // The pack's writers (zip, PDF) are loaded by this subcommand only, not by every sign-off step.
        const { exportEvidencePack } = await import('../evidence/export-pack.js');
        const outcome = await exportEvidencePack(ctx, { date, month: opts.month, partial: opts.partial, out: opts.out });
        const lines = [
          `Wrote ${outcome.out}: ${outcome.dates.length} approved date(s) (${outcome.dates.join(', ')}), ${outcome.files} file(s), ${outcome.signed ? `signed by the key with fingerprint ${outcome.publicKeyFingerprint}` : 'UNSIGNED (no RECON_SIGNING_KEY_FILE): it proves integrity, not origin'}.`,
        ];
        if (outcome.leftOut.length > 0) lines.push(`Left out (not approved): ${outcome.leftOut.map((s) => `${s.date} (${s.state})`).join(', ')}.`);
        runtime.output.out(lines.join('\n'));
        return 0;
      });
    });
}
