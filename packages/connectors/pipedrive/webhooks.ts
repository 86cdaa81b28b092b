/**
 * Pipedrive's general webhooks, version 2.0 (https://pipedrive.readme.io/docs/guide-for-webhooks-v2):
 * made by API (`POST /v1/webhooks` with `subscription_url`, `event_action`, `event_object`,
 * `version: "2.0"`), one per object here. Pipedrive signs nothing: a webhook sends the HTTP Basic
 * credentials it was made with (`http_auth_user` / `http_auth_password`), so Lockstep gives each
 * connection's webhooks a random password and checks it on every delivery. Each event is one POST
 * of `{data, previous, meta}`; `meta.id` identifies the event (the same on a retry, whose
 * `meta.attempt` grows), `meta.entity` names the object. Events only wake a read.
 */
import { safeEqual } from '../sdk/webhooks';
import type { PipedriveEntityType } from './pipedrive-connector';

/** The user name of the HTTP Basic credentials Lockstep's webhooks send. */
export const PIPEDRIVE_WEBHOOK_USER = 'lockstep';

/** How long event ids are kept against a retried delivery. */
export const PIPEDRIVE_WEBHOOK_RETRY_WINDOW_MS = 4 * 86_400_000;

/** The webhook event object of each synced entity type (the table's remote id). */
export const PIPEDRIVE_EVENT_OBJECTS: Record<PipedriveEntityType, string> = {
  persons: 'person',
  organizations: 'organization',
  deals: 'deal',
};

/** Whether a delivery's `Authorization` header carries the webhook's Basic credentials (constant time). */
export function verifyPipedriveBasicAuth(password: string, authorization: string | undefined): boolean {
  if (!password) return false;
  const match = /^basic\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) return false;
  const received = Buffer.from(match[1], 'base64').toString('utf8');
  return safeEqual(received, `${PIPEDRIVE_WEBHOOK_USER}:${password}`);
}

export type PipedriveWebhookEvent = {
  /** The event's identity: `meta.id`, else what names the change (entity, id, action, time). */
  eventId: string;
  /** The table the event is about (`persons`, ...), or null for another object. */
  tableRemoteId: PipedriveEntityType | null;
  webhookId: string | null;
};

/** A v2 delivery's event; null when the body is not one. */
export function parsePipedriveWebhook(body: string): PipedriveWebhookEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const meta = (parsed as { meta?: unknown } | null)?.meta;
  if (!meta || typeof meta !== 'object') return null;
  const m = meta as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  const entity = text(m.entity);
  const table =
    (Object.entries(PIPEDRIVE_EVENT_OBJECTS).find(([, object]) => object === entity)?.[0] as
      | PipedriveEntityType
      | undefined) ?? null;
  const eventId = text(m.id)
    ? `pipedrive:${text(m.id).slice(0, 200)}`
    : `pipedrive:${entity}:${text(m.entity_id)}:${text(m.action)}:${text(m.timestamp)}`;
  return { eventId, tableRemoteId: table, webhookId: text(m.webhook_id) || null };
}
