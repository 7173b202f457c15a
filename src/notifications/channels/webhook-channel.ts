import { Webhook } from 'standardwebhooks';
import type { Secret } from '../../secret.js';
import type { NotificationEvent } from '../events.js';
import type { Channel } from './channel.js';
import { originOf, postJson } from './post-json.js';

/**
 * The event as JSON, signed as the Standard Webhooks specification says (webhook-id,
 * webhook-timestamp, webhook-signature) by its reference library, so any receiver verifies it
 * with a stock implementation and the shared secret. The id is the event's: a retry carries the
 * same id, and receivers deduplicate on it.
 */
export function createWebhookChannel(settings: { url: Secret; secret: Secret }): Channel {
  const signer = new Webhook(settings.secret.reveal());
  const target = `webhook ${originOf(settings.url.reveal())}`;
  return {
    name: 'webhook',
    target,
    async send(event, at, signal) {
      const body = JSON.stringify(event satisfies NotificationEvent);
      // Whole seconds: the header carries seconds, and the signature must cover that same value.
      const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
      const headers = {
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp.getTime() / 1000),
        'webhook-signature': signer.sign(event.id, timestamp, body),
      };
      await postJson(settings.url.reveal(), body, headers, `The ${target}`, at, signal);
    },
  };
}
