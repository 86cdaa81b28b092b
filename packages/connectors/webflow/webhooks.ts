/**
 * Webflow's webhooks for CMS items, as Webflow documents them ("Working with webhooks"): a site's
 * webhooks are made by API (`POST /v2/sites/{site_id}/webhooks` with `triggerType` and `url`), one
 * per trigger type. Each delivery is a POST of `{triggerType, payload}` (the item, with `siteId` and
 * `collectionId`) carrying `x-webflow-timestamp` (ms) and `x-webflow-signature`, the hex
 * HMAC-SHA256 of `${timestamp}:${body}`. The key is the OAuth app's client secret for a webhook
 * made with an app's token, and the webhook's own secret (returned when it is made) for one made
 * with a site token. A delivery older than 5 minutes is refused as a replay, as Webflow advises.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The item changes that wake a sync (publishing alone changes nothing Lockstep reads). */
export const WEBFLOW_WEBHOOK_TRIGGERS = [
  'collection_item_created',
  'collection_item_changed',
  'collection_item_deleted',
  'collection_item_unpublished',
] as const;

/** Webflow's advice: a delivery older than this may be a replay. */
export const WEBFLOW_WEBHOOK_MAX_AGE_MS = 5 * 60_000;

export type WebflowWebhookVerdict = 'ok' | 'bad_signature' | 'stale';

/**
 * Checks a delivery against the keys that may have signed it (the app's client secret, the
 * webhooks' own secrets): a signature none of them makes is `bad_signature`; a good one outside
 * five minutes of `now` is `stale`.
 */
export function verifyWebflowSignature(input: {
  keys: string[];
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  now?: number;
}): WebflowWebhookVerdict {
  const { timestamp, signature } = input;
  if (!timestamp || !signature || !/^\d+$/.test(timestamp) || !/^[0-9a-f]{64}$/i.test(signature))
    return 'bad_signature';
  const given = Buffer.from(signature.toLowerCase(), 'hex');
  const signed = input.keys.some((key) => {
    if (!key) return false;
    const expected = createHmac('sha256', key).update(`${timestamp}:${input.body}`, 'utf8').digest();
    return timingSafeEqual(expected, given);
  });
  if (!signed) return 'bad_signature';
  const age = Math.abs((input.now ?? Date.now()) - Number(timestamp));
  return age > WEBFLOW_WEBHOOK_MAX_AGE_MS ? 'stale' : 'ok';
}

export type WebflowWebhookEvent = {
  triggerType: string;
  siteId: string | null;
  collectionId: string | null;
  itemId: string | null;
};

/** The event a delivery's body describes; null when it is not a Webflow webhook body. */
export function parseWebflowWebhook(body: string): WebflowWebhookEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const o = parsed as { triggerType?: unknown; payload?: unknown };
  if (typeof o.triggerType !== 'string') return null;
  const p = (o.payload && typeof o.payload === 'object' ? o.payload : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  return {
    triggerType: o.triggerType,
    siteId: text(p.siteId),
    collectionId: text(p.collectionId),
    itemId: text(p.id) ?? text(p.itemId),
  };
}

/**
 * One id per delivery (Webflow's carry none): a hash of the signed timestamp and body. A replay of
 * the same delivery is taken once; Webflow's own retry (a new timestamp) is taken again, harmlessly.
 */
export const webflowDeliveryId = (timestamp: string, body: string) =>
  createHash('sha256').update(`${timestamp}:${body}`).digest('hex');

/**
 * A connection's webhooks as kept (sealed): the ids, comma-joined, and the secrets Webflow
 * returned for them (site-token webhooks), as JSON `{id: secret}`; none for app-made ones.
 */
export type WebflowWebhookSet = { id: string; notificationUrl: string; secret?: string };

/** The per-webhook secrets of a kept set. */
export function webflowWebhookSecrets(hook: { secret?: string } | null | undefined): Record<string, string> {
  if (!hook?.secret) return {};
  try {
    const parsed = JSON.parse(hook.secret) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      ),
    );
  } catch {
    return {};
  }
}
