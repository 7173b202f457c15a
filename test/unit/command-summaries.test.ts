import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-catalog.js';
import type { CliRuntime } from '../../src/cli/runtime.js';

// `--help` lists each command by its one-line summary, read from a module apart from the command
// itself: the summaries that enumerate a command's subcommands must keep up with the command.
const ENUMERATING = ['users', 'signoff'] as const;

describe('command summaries', () => {
  for (const name of ENUMERATING) {
    it(`names every subcommand of ${name}`, async () => {
      const entry = COMMANDS.find((c) => c.name === name)!;
      const program = new Command();
      (await entry.load())(program, {} as CliRuntime);
      const subcommands = program.commands.find((c) => c.name() === name)!.commands.map((c) => c.name());
      expect(subcommands.length).toBeGreaterThan(1);
      for (const subcommand of subcommands) expect(entry.summary, `${name} ${subcommand}`).toMatch(new RegExp(`\\b${subcommand}\\b`));
    });
  }
});
