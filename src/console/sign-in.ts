import type { AppContext } from '../app-context.js';
import { findUserByName, insertAudit, insertSignInAttempt, listRecentFailures, markSignInAttemptSucceeded, type ConsoleUser } from '../db/console.repository.js';
import { ReconError } from '../errors.js';
import { HashGate, SignInBusyError } from './hash-gate.js';
import { decoyHash, verifyPassword } from './passwords.js';
import { formatLocalTime } from '../business-date/local-time.js';

/** Failures count for this long. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failures of one name from one address within the window after which that address is refused for that name. */
export const SIGN_IN_MAX_FAILURES = 5;
/** Failures from one address within the window, whatever the names, after which that address is refused. */
export const SIGN_IN_MAX_ADDRESS_FAILURES = 20;
/** Failures of one name from anywhere within the window after which each of its checks is slowed down (never refused). */
export const SIGN_IN_NAME_SLOW_AFTER = 10;
/** The added wait of each check of such a name. */
export const SIGN_IN_NAME_SLOW_MS = 2_000;

/** A sign-in refused because of earlier failures from the same address: the person should wait, not retype (HTTP 429). */
export class SignInThrottledError extends ReconError {
  override readonly code = 'E_SIGN_IN_THROTTLED';
  constructor(
    message: string,
    readonly retryAt: Date,
  ) {
    super(message);
  }
}

export { SignInBusyError };

/**
 * Runs tasks of one key one after another (a promise chain per key): the check of the limits and
 * the recording of an attempt are one step per address, so parallel requests cannot all pass
 * the count before any of them is recorded.
 */
class KeyedSerializer {
  readonly #tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}

/** The sign-in limits of one process: the per-address serializer and the bounded password hashing. */
export class SignInGuard {
  readonly serializer = new KeyedSerializer();
  /** When a refusal was last audited per address and name: one audit row per lockout, not one per request. */
  readonly #auditedLockouts = new Map<string, number>();
  constructor(readonly gate = new HashGate()) {}

  /** Whether this lockout (pair or address, until `retryAt`) still needs its audit row. */
  firstRefusal(key: string, retryAt: Date): boolean {
    if (this.#auditedLockouts.get(key) === retryAt.getTime()) return false;
    if (this.#auditedLockouts.size > 10_000) this.#auditedLockouts.clear();
    this.#auditedLockouts.set(key, retryAt.getTime());
    return true;
  }
}


/**
 * Checks a user name and password under the sign-in policy (docs/console.md, "Sign-in limits"):
 *
 * - the limits are checked and the attempt recorded (as a failure, until its password proves
 *   right) in one step per address, before the password is checked: however many requests arrive
 *   at once, at most SIGN_IN_MAX_FAILURES passwords of one name are checked per address and window;
 * - a lockout holds for the address it came from only (its failures, per name and overall), so
 *   nobody elsewhere can lock a user out; failures of a name from everywhere slow its checks down;
 * - every check, unknown names included, costs one scrypt hash through the bounded, per-address
 *   fair HashGate (SignInBusyError beyond it), so a wrong name takes as long as a wrong password.
 *
 * Returns the user, or undefined for a wrong name or password (the caller says the same for both).
 */
export async function authenticate(ctx: AppContext, name: string, password: string, address: string, guard: SignInGuard): Promise<ConsoleUser | undefined> {
  const db = ctx.database.db;
  // The limits first (429 says when to come back), then the room for a check (503: in a moment).
  const admitted = await guard.serializer.run(address, async () => {
    const now = ctx.clock.now();
    const failures = await listRecentFailures(db, { userName: name, address, since: new Date(now.getTime() - SIGN_IN_WINDOW_MS) });
    const refuse = async (kind: 'pair' | 'address', list: Date[], limit: number, text: string): Promise<never> => {
      const retryAt = new Date(list[list.length - limit]!.getTime() + SIGN_IN_WINDOW_MS);
      if (guard.firstRefusal(`${kind}:${address}:${kind === 'pair' ? name : ''}`, retryAt)) {
        await insertAudit(db, { at: now, userName: name, address, action: 'sign-in', outcome: 'refused', detail: { reason: kind === 'pair' ? 'too many failed sign-ins of this name from this address' : 'too many failed sign-ins from this address', until: retryAt.toISOString() } });
      }
      throw new SignInThrottledError(`${text}: wait until ${formatLocalTime(retryAt, ctx.config.timezone, { timeOnly: true })} and try again, or ask an administrator ("wallet-recon users unlock ${name}").`, retryAt);
    };
    if (failures.pair.length >= SIGN_IN_MAX_FAILURES) return refuse('pair', failures.pair, SIGN_IN_MAX_FAILURES, `Too many failed sign-ins for "${name}" from your address (${SIGN_IN_MAX_FAILURES} within 15 minutes)`);
    if (failures.address.length >= SIGN_IN_MAX_ADDRESS_FAILURES) return refuse('address', failures.address, SIGN_IN_MAX_ADDRESS_FAILURES, `Too many failed sign-ins from your address (${SIGN_IN_MAX_ADDRESS_FAILURES} within 15 minutes)`);
    const place = guard.gate.reserve(address);
    if (place === undefined) throw new SignInBusyError();
    const attemptId = await insertSignInAttempt(db, { userName: name, at: now, address, succeeded: false });
    return { place, attemptId, now, slow: failures.name.length >= SIGN_IN_NAME_SLOW_AFTER };
  });
  const { place, attemptId, now, slow } = admitted;
  const user = await findUserByName(db, name);
  const usable = user !== undefined && user.disabledAt === null && user.passwordHash !== null;
  // A name guessed from many addresses is slowed, never refused: its owner still gets in.
  if (slow) await new Promise((resolve) => setTimeout(resolve, SIGN_IN_NAME_SLOW_MS));
  const matches = await place.run(async () => verifyPassword(password, usable ? user.passwordHash! : await decoyHash()));
  const ok = matches && usable;
  if (ok) await markSignInAttemptSucceeded(db, attemptId);
  await insertAudit(db, { at: now, userName: name, address, action: 'sign-in', outcome: ok ? 'ok' : 'refused', detail: ok ? undefined : { reason: user === undefined ? 'unknown user' : user.disabledAt !== null ? 'disabled' : user.passwordHash === null ? 'single sign-on user' : 'wrong password' } });
  return ok ? user : undefined;
}

/** The CLI's guard: one process, one person at a terminal. */
const cliGuard = new SignInGuard();

/** The password check of the CLI (`signoff --as NAME --password-stdin`): an error when it fails. */
export async function authenticateForCli(ctx: AppContext, name: string, password: string): Promise<ConsoleUser> {
  const user = await authenticate(ctx, name, password, 'cli', cliGuard);
  if (user === undefined) throw new ReconError(`Could not sign in as "${name}": the user name or password is wrong, or the user is disabled.`);
  return user;
}
