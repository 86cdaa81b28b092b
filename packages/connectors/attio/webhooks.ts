/**
 * Attio's webhooks (https://docs.attio.com/rest-api/guides/webhooks): made by API
 * (`POST /v2/webhooks` with a target URL and event subscriptions; the answer carries the webhook's
 * secret, shown once). Each delivery is a POST of `{webhook_id, events: [...]}` whose
 * `Attio-Signature` header (also sent as `X-Attio-Signature`) is the hex HMAC-SHA256 of the raw body
 * keyed by that secret. An `Idempotency-Key` header differs per message and stays the same across
 * Attio's retries (up to 10 over about 3 days): it is the delivery's identity, as the events carry
 * none of their own (`id` names the record, and two edits of one attribute send the same event).
 * Record events name objects by id; they only wake a read and are never taken as data.
 */
import { createHash } from 'node:crypto';
import { verifyHmacSha256 } from '../sdk/webhooks';

/** The record events Lockstep subscribes to: what changes an object's records. */
export const ATTIO_RECORD_EVENTS = ['record.created', 'record.updated', 'record.deleted', 'record.merged'];

/** How long Attio may send a message again (10 retries over about 3 days), with a day to spare. */
export const ATTIO_WEBHOOK_RETRY_WINDOW_MS = 4 * 86_400_000;

/** Whether `signature` (the `Attio-Signature` header) is the body's HMAC under the webhook's secret. */
export function verifyAttioSignature(secret: string, body: string, signature: string | undefined): boolean {
  if (!secret) return false;
  return verifyHmacSha256({ secret, payload: body, signature, encoding: 'hex' });
}

export type AttioWebhookDelivery = {
  webhookId: string | null;
  /** The ids of the objects whose records the delivery's record events are about. */
  objectIds: string[];
};

/** A delivery's webhook and the objects its record events name (other events are left out); null when unreadable. */
export function parseAttioWebhook(body: string): AttioWebhookDelivery | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const { webhook_id, events } = parsed as { webhook_id?: unknown; events?: unknown };
  const objectIds = new Set<string>();
  for (const e of Array.isArray(events) ? events : []) {
    if (!e || typeof e !== 'object') continue;
    const { event_type, id } = e as { event_type?: unknown; id?: { object_id?: unknown } };
    if (typeof event_type !== 'string' || !ATTIO_RECORD_EVENTS.includes(event_type)) continue;
    if (typeof id?.object_id === 'string' && id.object_id) objectIds.add(id.object_id);
  }
  return { webhookId: typeof webhook_id === 'string' ? webhook_id : null, objectIds: [...objectIds] };
}

/**
 * The identity a delivery is taken once by: its `Idempotency-Key` (the same on every retry), else
 * (a sender without one) the hash of the signed body.
 */
export function attioDeliveryId(idempotencyKey: string | undefined, body: string): string {
  const key = idempotencyKey?.trim();
  if (key) return `attio:${key.slice(0, 200)}`;
  return `attio-body:${createHash('sha256').update(body).digest('hex')}`;
}
