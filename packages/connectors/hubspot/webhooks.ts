/**
 * HubSpot's webhooks, as a private app (or public app) subscribed to CRM events receives them: a
 * JSON array of events POSTed to the app's target URL and signed with the app's client secret.
 * v3 signature: X-HubSpot-Signature-v3 = base64(HMAC-SHA256(clientSecret, method + uri + body +
 * timestamp)) with X-HubSpot-Request-Timestamp in milliseconds; HubSpot asks receivers to refuse a
 * timestamp older than 5 minutes. Events name objects only (ids), so they wake a read: they are
 * never taken as data.
 */
import { isFreshTimestamp, verifyHmacSha256 } from '../sdk/webhooks';

/** HubSpot's replay window for v3 signatures. */
export const HUBSPOT_WEBHOOK_MAX_AGE_MS = 5 * 60_000;

/**
 * HubSpot's search index lags a write by seconds: a read started the moment an event arrives can
 * miss the change it announces, so the run it wakes starts this much later (the read's 30 s overlap
 * would catch it at the next poll, but the point of a webhook is not to wait for that).
 */
export const HUBSPOT_WEBHOOK_READ_DELAY_S = 5;

/** Checks a delivery's v3 signature and its age. `uri` is the full address HubSpot posted to. */
export function verifyHubSpotSignatureV3(input: {
  clientSecret: string;
  method: string;
  uri: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  now?: number;
}): 'ok' | 'bad_signature' | 'stale' {
  const { clientSecret, method, uri, body, timestamp, signature } = input;
  if (!timestamp || !signature) return 'bad_signature';
  const signed = verifyHmacSha256({
    secret: clientSecret,
    payload: `${method.toUpperCase()}${uri}${body}${timestamp}`,
    signature,
    encoding: 'base64',
  });
  if (!signed) return 'bad_signature';
  return isFreshTimestamp(timestamp, {
    toleranceMs: HUBSPOT_WEBHOOK_MAX_AGE_MS,
    ...(input.now !== undefined ? { now: input.now } : {}),
  })
    ? 'ok'
    : 'stale';
}

/** The object type (a table's remote id) an event is about. */
const BY_SUBSCRIPTION: Record<string, string> = { contact: 'contacts', company: 'companies', deal: 'deals' };
/** Generic `object.*` subscriptions name the type by its id. */
const BY_OBJECT_TYPE_ID: Record<string, string> = { '0-1': 'contacts', '0-2': 'companies', '0-3': 'deals' };

export type HubSpotWebhookEvent = { eventId: string; objectType: string; objectId: string };

/** The events of one delivery that name a synced object type; anything else is left out. */
export function parseHubSpotWebhook(body: string): HubSpotWebhookEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((raw) => {
    if (typeof raw !== 'object' || raw === null) return [];
    const e = raw as Record<string, unknown>;
    const [prefix] = String(e.subscriptionType ?? '').split('.');
    const objectType =
      prefix === 'object' ? BY_OBJECT_TYPE_ID[String(e.objectTypeId ?? '')] : BY_SUBSCRIPTION[prefix ?? ''];
    if (!objectType || e.eventId === undefined) return [];
    return [{ eventId: String(e.eventId), objectType, objectId: String(e.objectId ?? '') }];
  });
}
