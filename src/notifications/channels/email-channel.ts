import nodemailer from 'nodemailer';
import { isLoopbackHost } from '../../gateway/base-url.js';
import { NotificationError } from '../../errors.js';
import { maskUrlPasswords } from '../../logger.js';
import type { Secret } from '../../secret.js';
import { headlineOf, type NightCompletedData, type NotificationEvent } from '../events.js';
import { renderEventHtml, renderEventText, type RenderOptions } from '../render-event.js';
import type { Channel } from './channel.js';
import { maskUrlSecrets, secretPartsOfUrl } from './url-secrets.js';

export interface EmailSettings {
  smtpUrl: Secret;
  from: string;
  to: readonly string[];
}

/** Renders the day's self-contained HTML report, attached to the nightly digest. */
export type ReportRenderer = (businessDate: string) => Promise<string>;

/** SMTP reply codes 4xx (and no reply at all) are transient; 5xx is a refusal (RFC 5321 §4.2.1). */
function isTransientSmtpFailure(error: unknown): boolean {
  const code = (error as { responseCode?: unknown }).responseCode;
  return typeof code !== 'number' || code < 500;
}

/**
 * One message to every recipient: a plain-text body, an HTML body and, for the nightly digest,
 * the day's HTML report as an attachment. The SMTP URL carries the password: messages name the
 * server's host only.
 */
export function createEmailChannel(settings: EmailSettings, renderReport?: ReportRenderer, options?: RenderOptions): Channel {
  const url = new URL(settings.smtpUrl.reveal());
  const secure = url.protocol === 'smtps:';
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    // smtp:// to another machine must upgrade with STARTTLS before the password is sent.
    requireTLS: !secure && !isLoopbackHost(url.hostname),
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  const target = `e-mail via ${url.hostname}:${url.port || (secure ? 465 : 587)} to ${settings.to.join(', ')}`;
  return {
    name: 'email',
    target,
    async send(event: NotificationEvent) {
      const attachments =
        event.type === 'night.completed' && renderReport
          ? [{ filename: `reconciliation-${(event.data as NightCompletedData).businessDate}.html`, content: await renderReport((event.data as NightCompletedData).businessDate), contentType: 'text/html; charset=utf-8' }]
          : [];
      try {
        await transport.sendMail({
          from: settings.from,
          to: [...settings.to],
          subject: `[wallet-recon] ${headlineOf(event)}`,
          text: renderEventText(event, options),
          html: renderEventHtml(event, options),
          attachments,
          headers: { 'X-Wallet-Recon-Event': event.id },
        });
      } catch (error) {
        const transient = isTransientSmtpFailure(error);
        const detail = maskUrlSecrets(maskUrlPasswords(error instanceof Error ? error.message : String(error)), secretPartsOfUrl(settings.smtpUrl.reveal(), { secretPath: false }))
          .replace(/\s+/g, ' ')
          .slice(0, 200);
        throw new NotificationError(`The SMTP server ${url.hostname} did not take the message: ${detail}${transient ? '' : ' (refused, not tried again)'}.`, transient, undefined, {
          cause: new Error(detail),
        });
      }
    },
    close() {
      transport.close();
    },
  };
}
