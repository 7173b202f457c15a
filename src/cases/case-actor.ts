import { userInfo } from 'node:os';
import type { Config } from '../config/index.js';

/** Who a manual case action is recorded as: `--by NAME`, else RECON_ACTOR, else the operating-system user. */
export function resolveActor(by: string | undefined, config: Pick<Config, 'actor'>): string {
  const given = by?.trim();
  if (given) return given;
  if (config.actor !== undefined) return config.actor;
  try {
    return userInfo().username || 'unknown';
  } catch {
    // A container user without a passwd entry has no name; the audit trail still needs one.
    return 'unknown';
  }
}
