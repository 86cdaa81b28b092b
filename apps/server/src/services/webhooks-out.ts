import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { checkHost, publicHostsOnly, publicOnlyLookup } from '@lockstep/connectors';
import { WEBHOOK_SIGNATURE_HEADER, type WebhookEventType } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { WebhookDeliveryAttemptTable, WebhookSubscriptionTable } from '../db/schema';
import { HttpError } from '../http/http-error';
import type { SecretBox } from './secret-box';

/** A delivery that takes longer than this is a failed attempt (retried). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Bytes of a receiver's answer kept in an attempt's error. */
const ERROR_BODY_CHARS = 300;

export type WebhookEvent = {
  /** The event's id: the same on every attempt, so a receiver can drop a repeat. */
  id: string;
  type: WebhookEventType | 'test';
  createdAt: string;
  data: Record<string, unknown>;
};

export const newEvent = (type: WebhookEvent['type'], data: Record<string, unknown>): WebhookEvent => ({
  id: randomUUID(),
  type,
  createdAt: new Date().toISOString(),
  data,
});

/** A subscription's signing secret: `whsec_` and 32 random bytes. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** `t=<unix seconds>,v1=<hex of HMAC-SHA256(secret, t + "." + body)>`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export const toSubscription = (r: Selectable<WebhookSubscriptionTable>) => ({
  id: r.id,
  url: r.url,
  events: r.events as WebhookEventType[],
  paused: r.paused,
  createdAt: new Date(r.created_at).toISOString(),
});

export const toAttempt = (r: Selectable<WebhookDeliveryAttemptTable>) => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.event_type,
  attempt: r.attempt,
  statusCode: r.status_code,
  durationMs: r.duration_ms,
  error: r.error,
  createdAt: new Date(r.created_at).toISOString(),
});

/**
 * Refuses a receiver URL that leads into Lockstep's own network (outside local and test mode),
 * with a 400 that says why; the delivery checks again when it connects (DNS may change).
 */
export async function assertReceiverAllowed(url: string) {
  const check = await checkHost(new URL(url).hostname, { allowPrivate: !publicHostsOnly() });
  if (!check.ok)
    throw new HttpError(400, check.error.message, check.error.userFacingMessage, 'url_not_allowed');
}

export type DeliveryResult = {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
};

/** One POST of the event to the receiver: signed, 10 s at most, through the SSRF guard outside local mode. */
export async function postEvent(url: string, secret: string, event: WebhookEvent): Promise<DeliveryResult> {
  const started = Date.now();
  const body = JSON.stringify(event);
  const done = (statusCode: number | null, error: string | null): DeliveryResult => ({
    ok: statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    durationMs: Date.now() - started,
    error,
  });
  try {
    await assertReceiverAllowed(url);
  } catch (error) {
    return done(null, error instanceof HttpError ? String(error.userFacingMessage) : String(error));
  }
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<DeliveryResult>((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Lockstep-Webhooks/1',
          [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(secret, body, Math.floor(Date.now() / 1000)),
          'Lockstep-Event': event.type,
          'Lockstep-Event-Id': event.id,
        },
        timeout: DELIVERY_TIMEOUT_MS,
        ...(publicHostsOnly() ? { lookup: publicOnlyLookup() } : {}),
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (text.length < ERROR_BODY_CHARS) text += chunk;
        });
        response.on('end', () => {
          const status = response.statusCode ?? null;
          const ok = status !== null && status >= 200 && status < 300;
          resolve(
            done(status, ok ? null : `The receiver answered ${status}: ${text.slice(0, ERROR_BODY_CHARS)}`),
          );
        });
        response.on('error', (error) => resolve(done(response.statusCode ?? null, error.message)));
      },
    );
    // A deadline for the whole exchange, not only for idle sockets.
    const deadline = setTimeout(
      () => request.destroy(new Error(`No answer within ${DELIVERY_TIMEOUT_MS / 1000} s`)),
      DELIVERY_TIMEOUT_MS,
    );
    request.on('timeout', () =>
      request.destroy(new Error(`No answer within ${DELIVERY_TIMEOUT_MS / 1000} s`)),
    );
    request.on('error', (error) => resolve(done(null, error.message)));
    request.on('close', () => clearTimeout(deadline));
    request.end(body);
  });
}

/** Delivers once and records the attempt in the subscription's log. */
export async function deliverAndLog(
  db: Db,
  secretBox: SecretBox,
  subscription: Selectable<WebhookSubscriptionTable>,
  event: WebhookEvent,
  attempt: number,
): Promise<DeliveryResult> {
  const result = await postEvent(subscription.url, secretBox.open<string>(subscription.secret_sealed), event);
  await db
    .insertInto('webhook_delivery_attempt')
    .values({
      subscription_id: subscription.id,
      owner_id: subscription.owner_id,
      event_id: event.id,
      event_type: event.type,
      attempt,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
    })
    .execute();
  return result;
}
