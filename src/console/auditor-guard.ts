import type { AppContext } from '../app-context.js';
import { findUserByName, insertAudit } from '../db/console.repository.js';
import { ReconError } from '../errors.js';

/** An action refused because the person taking it has the auditor role: nothing changed. */
export class AuditorRefusedError extends ReconError {
  override readonly code = 'E_AUDITOR_REFUSED';
  override readonly exitCode = 1;
}

/**
 * Refuses (and audits) an action a CLI command would record as taken by `actor` when that name is
 * a console user with the auditor role: an auditor sees everything and acts on nothing, from the
 * console or the command line.
 */
export async function refuseAuditorActor(ctx: AppContext, actor: string, action: string, target: string): Promise<void> {
  const user = await findUserByName(ctx.database.db, actor);
  if (user?.role !== 'auditor') return;
  await insertAudit(ctx.database.db, { at: ctx.clock.now(), userName: actor, address: 'cli', action, target, outcome: 'refused', detail: { reason: 'auditor role' } });
  throw new AuditorRefusedError(`Refused: "${actor}" has the auditor role and can look at everything but change nothing (${action} ${target}). Nothing was changed.`);
}
