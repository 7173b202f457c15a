import type { NotificationChannel } from '../../db/database.types.js';
import type { NotificationEvent } from '../events.js';

/** One way of telling people. `send` resolves when the event was accepted, or throws NotificationError. */
export interface Channel {
  readonly name: NotificationChannel;
  /** Where it sends, safe to print (no secret: an origin, "Slack", the SMTP host). */
  readonly target: string;
  send(event: NotificationEvent, at: Date): Promise<void>;
  close?(): void;
}
