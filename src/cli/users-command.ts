import { formatLocalTime } from '../business-date/local-time.js';
import { Option, type Command } from 'commander';
import { resolveActor } from '../cases/case-actor.js';
import { addUser, checkPassword, checkUserName, disableUser, enableUser, listUsers, parseRole, resetPassword, setUserRole, unlockUser } from '../console/console-users.js';
import { generatePassword } from '../console/passwords.js';
import { CONSOLE_ROLES } from '../console/roles.js';
import { formatTable } from '../text-table.js';
import { summaryOf } from './command-summaries.js';
import { readPasswordFromStdin } from './read-stdin.js';
import type { CliRuntime } from './runtime.js';

/** `wallet-recon users`: the review console's local users and their roles. */
export function registerUsersCommand(program: Command, runtime: CliRuntime): void {
  const users = program
    .command('users')
    .description(summaryOf('users'))
    .addHelpText(
      'after',
      `
Roles: viewer (sees everything, changes nothing), preparer (works cases, prepares a sign-off),
approver (works cases, approves someone else's sign-off), admin (all of it; never both steps of one sign-off).

Examples:
  wallet-recon users add anna --role preparer                    prints a generated password once
  printf '%s' "$PASSWORD" | wallet-recon users add ben --role approver --password-stdin
  wallet-recon users list
  wallet-recon users set-role anna approver
  wallet-recon users disable anna                                 also ends her sessions
  wallet-recon users enable anna                                  lets her sign in again
  wallet-recon users unlock anna                                  forgets her failed sign-ins
  wallet-recon users reset-password anna                          prints a generated password once
  printf '%s' "$PASSWORD" | wallet-recon users reset-password anna --password-stdin

Roles of single sign-on users come from the identity provider's groups at every sign-in:
set-role refuses them (see docs/console.md).

Exit codes: 0 done, 1 error, 2 usage error (unknown user or role, a name taken, a password too short), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.`,
    );

  users
    .command('add')
    .description('add a local user with a role; the password comes from standard input, or is generated and printed once')
    .argument('<name>', 'user name (letters, digits, ".", "_", "@", "-")')
    .addOption(new Option('--role <role>', 'what the user may do').choices(CONSOLE_ROLES).makeOptionMandatory())
    .option('--password-stdin', 'read the password from standard input (at least 12 characters)')
    .action(async (name: string, opts: { role: string; passwordStdin?: boolean }) => {
      checkUserName(name);
      const role = parseRole(opts.role);
      const password = opts.passwordStdin ? await readPasswordFromStdin(runtime.output.input) : generatePassword();
      await runtime.withContext('wallet-recon users add', {}, async (ctx) => {
        const user = await addUser(ctx, name, role, password, resolveActor(undefined, ctx.config));
        runtime.output.out(`Added user "${user.name}" with the ${user.role} role.`);
        // Shown once, on stdout only: it is stored as a scrypt hash and cannot be read back.
        if (!opts.passwordStdin) runtime.output.out(`Password (shown only now): ${password}`);
        return 0;
      });
    });

  users
    .command('list')
    .description('every user with role, origin and state')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await runtime.withContext('wallet-recon users list', {}, async (ctx) => {
        const all = await listUsers(ctx.database.db);
        if (opts.json) {
          runtime.output.out(JSON.stringify(all.map((u) => ({ name: u.name, role: u.role, source: u.source, disabled_at: u.disabledAt?.toISOString() ?? null, created_at: u.createdAt.toISOString() })), null, 2));
        } else if (all.length === 0) {
          runtime.output.out('No users yet. Add one with "wallet-recon users add NAME --role preparer".');
        } else {
          runtime.output.out(formatTable(['user', 'role', 'source', 'state', 'created'], all.map((u) => [u.name, u.role, u.source, u.disabledAt === null ? 'active' : `disabled ${formatLocalTime(u.disabledAt, ctx.config.timezone)}`, formatLocalTime(u.createdAt, ctx.config.timezone)])));
        }
        return 0;
      });
    });

  users
    .command('disable')
    .description('disable a user: they can no longer sign in, and their open sessions end now')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      await runtime.withContext('wallet-recon users disable', {}, async (ctx) => {
        const { user, endedSessions } = await disableUser(ctx, name, resolveActor(undefined, ctx.config));
        runtime.output.out(`Disabled user "${user.name}"; ${endedSessions} session${endedSessions === 1 ? '' : 's'} ended.`);
        return 0;
      });
    });

  users
    .command('set-role')
    .description("change a user's role (their sessions end, so it applies from the next sign-in)")
    .argument('<name>', 'user name')
    .argument('<role>', `one of ${CONSOLE_ROLES.join(', ')}`)
    .action(async (name: string, roleText: string) => {
      const role = parseRole(roleText);
      await runtime.withContext('wallet-recon users set-role', {}, async (ctx) => {
        const { before, user } = await setUserRole(ctx, name, role, resolveActor(undefined, ctx.config));
        runtime.output.out(before === role ? `User "${user.name}" already has the ${role} role.` : `User "${user.name}": ${before} -> ${role}.`);
        return 0;
      });
    });

  users
    .command('enable')
    .description('enable a disabled user again (their failed sign-ins are forgotten too)')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      await runtime.withContext('wallet-recon users enable', {}, async (ctx) => {
        const { user, wasDisabled } = await enableUser(ctx, name, resolveActor(undefined, ctx.config));
        runtime.output.out(wasDisabled ? `Enabled user "${user.name}": they can sign in again.` : `User "${user.name}" was not disabled; their failed sign-ins are forgotten.`);
        return 0;
      });
    });

  users
    .command('unlock')
    .description("forget a user's failed sign-ins, so they may try again at once from any address")
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      await runtime.withContext('wallet-recon users unlock', {}, async (ctx) => {
        const { user, forgottenFailures } = await unlockUser(ctx, name, resolveActor(undefined, ctx.config));
        runtime.output.out(`Unlocked user "${user.name}": ${forgottenFailures} failed sign-in${forgottenFailures === 1 ? '' : 's'} forgotten.`);
        return 0;
      });
    });

  users
    .command('reset-password')
    .description("give a local user a new password (their sessions end); it comes from standard input, or is generated and printed once")
    .argument('<name>', 'user name')
    .option('--password-stdin', 'read the new password from standard input (at least 12 characters)')
    .action(async (name: string, opts: { passwordStdin?: boolean }) => {
      checkUserName(name);
      const password = opts.passwordStdin ? await readPasswordFromStdin(runtime.output.input) : generatePassword();
      checkPassword(password);
      await runtime.withContext('wallet-recon users reset-password', {}, async (ctx) => {
        const { user, endedSessions } = await resetPassword(ctx, name, password, resolveActor(undefined, ctx.config));
        runtime.output.out(`New password set for "${user.name}"; ${endedSessions} session${endedSessions === 1 ? '' : 's'} ended.`);
        // Shown once, on stdout only: it is stored as a scrypt hash and cannot be read back.
        if (!opts.passwordStdin) runtime.output.out(`Password (shown only now): ${password}`);
        return 0;
      });
    });
}
