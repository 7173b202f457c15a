import type { ConsoleUser } from '../db/console.repository.js';
import type { NumberStyle } from '../money/number-style.js';

/**
 * What every console page is rendered with: who looks, the form token, a notice, how to show times
 * and amounts. Apart from pages.ts so the panels it includes can take it without importing the pages.
 */
export interface PageContext {
  user?: ConsoleUser;
  csrfToken?: string;
  /** A message shown on top: what was just done, or why it was refused. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** The active users a case may be assigned to (the case page's "Assign"). */
  assignees?: readonly string[];
  /** RECON_TIMEZONE: every time on a page is shown in it, with its zone. */
  timezone?: string;
  /** RECON_LOCALE's number style for amounts. */
  style?: NumberStyle;
}
