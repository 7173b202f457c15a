import type { Command } from 'commander';
import { verifyEvidencePack } from '../evidence/verify-pack.js';
import { summaryOf } from './command-summaries.js';
import type { CliRuntime } from './runtime.js';

/**
 * `wallet-recon verify-pack`: checks an evidence pack offline. It never asks the runtime for its
 * configuration or a context: no DATABASE_URL, .env or RECON_* is read, so an auditor runs it anywhere.
 */
export function registerVerifyPackCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('verify-pack')
    .description(summaryOf('verify-pack'))
    .argument('<file>', 'the evidence pack (zip) written by "wallet-recon signoff export"')
    .option('--public-key <file>', "the signer's public key (PEM) to check manifest.sig against, instead of the pack's own public-key.pem")
    .addHelpText(
      'after',
      `
Examples:
  wallet-recon verify-pack evidence-2026-11.zip
  wallet-recon verify-pack evidence-2026-11.zip --public-key signer.pem

Reads no database and no configuration. Checks the manifest's Ed25519 signature, every file
against manifest.json, the sign-off chain rows' links and hashes, and each sealed report against
its seal. See docs/cases-and-signoff.md.

Exit codes: 0 every check holds, 1 a file, the signature or a chain row does not (named), 2 not a zip, no manifest.json, or an unreadable --public-key.`,
    )
    .action(async (file: string, opts: { publicKey?: string }) => {
      const verified = await verifyEvidencePack(file, { publicKeyFile: opts.publicKey });
      if (verified.code === 0) runtime.output.out(verified.lines.join('\n'));
      else runtime.output.err(`${verified.code === 1 ? 'Pack does not hold: ' : ''}${verified.lines.join('\n')}`);
      runtime.exitCode = verified.code;
    });
}
