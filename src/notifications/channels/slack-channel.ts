import type { Secret } from '../../secret.js';
import { renderSlackMessage, type RenderOptions } from '../render-event.js';
import type { Channel } from './channel.js';
import { postJson } from './post-json.js';

/** An incoming-webhook message to Slack (its URL is the credential: never printed). */
export function createSlackChannel(settings: { url: Secret }, options?: RenderOptions): Channel {
  return {
    name: 'slack',
    target: 'Slack',
    async send(event, at, signal) {
      await postJson(settings.url.reveal(), JSON.stringify(renderSlackMessage(event, options)), {}, 'Slack', at, signal, { secretPath: true });
    },
  };
}
