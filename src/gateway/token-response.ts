import { describeJsonValue, isLosslessNumber } from '../lossless-json.js';

/** A token as issued: its value and, when the gateway said, when it stops working (epoch ms). */
export interface IssuedToken {
  value: string;
  expiresAt: number | undefined;
}

export type TokenReading = { ok: true; token: IssuedToken } | { ok: false; problem: string };

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);

/** A field name safe to repeat in a message; anything long or odd could be a credential used as a key. */
const SAFE_FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,39}$/;

/**
 * Reads the token response, whose shape the gateway does not publish. Accepted: `access_token`
 * or `token`, at the top level or inside `data`, with optional `expires_in` (seconds) or
 * `expires_at` (ISO-8601 or epoch seconds) beside it. Problems name fields, never values.
 */
export function readTokenResponse(body: unknown, now: number): TokenReading {
  const top = isObject(body) ? body : undefined;
  const data = top && isObject(top.data) ? top.data : undefined;
  const places: { holder: JsonObject; prefix: string }[] = [];
  if (top) places.push({ holder: top, prefix: '' });
  if (data) places.push({ holder: data, prefix: 'data.' });

  for (const { holder, prefix } of places) {
    const field = 'access_token' in holder ? 'access_token' : 'token' in holder ? 'token' : undefined;
    if (field === undefined) continue;
    const value = holder[field];
    if (typeof value !== 'string' || value.trim() === '') {
      return { ok: false, problem: `${prefix}${field} must be a non-empty string (got ${typeof value === 'string' ? 'an empty string' : describeJsonValue(value)})` };
    }
    // Expiry may sit beside the token or one level up (an envelope around the token object).
    const expiry = readExpiry(holder, prefix, now) ?? (holder === data && top ? readExpiry(top, '', now) : undefined);
    if (expiry && !expiry.ok) return expiry;
    return { ok: true, token: { value, expiresAt: expiry?.expiresAt } };
  }
  return { ok: false, problem: `expected access_token or token, at the top level or inside data; ${describeFields(body, top, data)}` };
}

function describeFields(body: unknown, top: JsonObject | undefined, data: JsonObject | undefined): string {
  if (!top) return `the body is ${describeJsonValue(body)}, not an object`;
  const names = Object.keys(top).filter((k) => !(k === 'data' && data));
  if (data) names.push(...Object.keys(data).map((k) => `data.${k}`));
  const safe = names.filter((n) => SAFE_FIELD_NAME.test(n));
  const hidden = names.length - safe.length;
  if (names.length === 0) return 'the body has no fields';
  return `fields seen: ${safe.join(', ')}${hidden > 0 ? `${safe.length > 0 ? ', ' : ''}${hidden} more with unusual names (not shown)` : ''}`;
}

type ExpiryReading = { ok: true; expiresAt: number } | { ok: false; problem: string };

function readExpiry(holder: JsonObject, prefix: string, now: number): ExpiryReading | undefined {
  if (holder.expires_in !== undefined && holder.expires_in !== null) {
    const seconds = readNumber(holder.expires_in);
    if (seconds === undefined || seconds < 0) {
      return { ok: false, problem: `${prefix}expires_in must be a number of seconds (got ${describeJsonValue(holder.expires_in)})` };
    }
    return { ok: true, expiresAt: now + seconds * 1000 };
  }
  if (holder.expires_at !== undefined && holder.expires_at !== null) {
    const raw = holder.expires_at;
    const seconds = readNumber(raw);
    if (seconds !== undefined) return { ok: true, expiresAt: seconds * 1000 };
    if (typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}/.test(raw.trim())) {
      const at = Date.parse(raw.trim());
      if (!Number.isNaN(at)) return { ok: true, expiresAt: at };
    }
    return { ok: false, problem: `${prefix}expires_at must be an ISO-8601 time or epoch seconds (got ${describeJsonValue(raw)})` };
  }
  return undefined;
}

function readNumber(value: unknown): number | undefined {
  const text = isLosslessNumber(value) ? value.value : typeof value === 'string' ? value.trim() : undefined;
  if (text === undefined || !/^\d+(\.\d+)?$/.test(text)) return undefined;
  return Number(text);
}
