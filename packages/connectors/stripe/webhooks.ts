/**
 * Stripe's webhooks, as a webhook endpoint made in the Dashboard (Developers > Webhooks) receives
 * them: one event per POST, JSON, signed with the endpoint's signing secret (`whsec_…`) in the
 * `Stripe-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (more
 * than one `v1` while a secret is being rolled). Stripe's libraries refuse a timestamp more than 5
 * minutes off. An event only wakes a read of its table: the read takes the change from the events
 * list like any other, so a delivery is never taken as data.
 */
import { isFreshTimestamp, verifyHmacSha256 } from '../sdk/webhooks';
import { STRIPE_EVENT_TYPES } from './stripe-connector';
import { STRIPE_TABLES, type StripeTable } from './stripe-objects';

/** Stripe's default tolerance for a signed timestamp. */
export const STRIPE_WEBHOOK_TOLERANCE_MS = 5 * 60_000;

/** `t=…,v1=…,v1=…` as its timestamp and v1 signatures (other schemes, such as v0, are ignored). */
export function parseStripeSignatureHeader(header: string | undefined): { timestamp?: string; v1: string[] } {
  const out: { timestamp?: string; v1: string[] } = { v1: [] };
  for (const part of (header ?? '').split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') out.timestamp = value;
    else if (key === 'v1' && value) out.v1.push(value);
  }
  return out;
}

/** Checks a delivery's signature against the endpoint's signing secret, and its age. */
export function verifyStripeSignature(input: {
  secret: string;
  body: string;
  header: string | undefined;
  now?: number;
  toleranceMs?: number;
}): 'ok' | 'bad_signature' | 'stale' {
  const { timestamp, v1 } = parseStripeSignatureHeader(input.header);
  if (!timestamp || v1.length === 0) return 'bad_signature';
  const payload = `${timestamp}.${input.body}`;
  if (!v1.some((signature) => verifyHmacSha256({ secret: input.secret, payload, signature })))
    return 'bad_signature';
  return isFreshTimestamp(timestamp, {
    toleranceMs: input.toleranceMs ?? STRIPE_WEBHOOK_TOLERANCE_MS,
    ...(input.now !== undefined ? { now: input.now } : {}),
  })
    ? 'ok'
    : 'stale';
}

const TABLE_OF_EVENT = new Map<string, StripeTable>(
  STRIPE_TABLES.flatMap((table) => STRIPE_EVENT_TYPES[table].map((type) => [type, table] as const)),
);

export type StripeWebhookEvent = {
  eventId: string;
  type: string;
  table: StripeTable;
  objectId: string | null;
};

/** The event of one delivery, when it is about a synced table; null otherwise (or unreadable). */
export function parseStripeWebhook(body: string): StripeWebhookEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const e = parsed as { id?: unknown; type?: unknown; data?: { object?: { id?: unknown } } };
  const table = typeof e.type === 'string' ? TABLE_OF_EVENT.get(e.type) : undefined;
  if (!table || typeof e.id !== 'string') return null;
  const objectId = e.data?.object?.id;
  return {
    eventId: e.id,
    type: e.type as string,
    table,
    objectId: typeof objectId === 'string' ? objectId : null,
  };
}
