import type { NotificationChannel } from '../../db/database.types.js';
import type { NotificationEvent } from '../events.js';

/** One way of telling people. `send` resolves when the event was accepted, or throws NotificationError. */
export interface Channel {
  readonly name: NotificationChannel;
  /** Where it sends, safe to print (no secret: an origin, "Slack", the SMTP host). */
  readonly target: string;
  /** `signal` ends an HTTP send early (shutdown); the attempt then counts as failed and is tried again. */
  send(event: NotificationEvent, at: Date, signal?: AbortSignal): Promise<void>;
  close?(): void;
}
