/**
 * Affinity's webhooks (API v1, https://api-docs.affinity.co/#webhooks): a subscription is made by
 * API (`POST /webhook/subscribe` with `webhook_url` and `subscriptions`, listed by `GET /webhook`,
 * changed by `PUT /webhook/{id}`, removed by `DELETE /webhook/{id}`), at most three per Affinity
 * account; Affinity contacts the URL when a subscription is made and refuses it unless the answer is
 * valid. Each event is one POST of `{type, body, sent_at}` (`sent_at` in Unix seconds).
 *
 * Affinity signs nothing (no signature header, no signing secret, no credentials): the address is
 * the only secret, so Lockstep's address carries a key only its server can make. Events carry no id
 * either: an event's identity is a hash of the raw delivery (its `sent_at` included). Events only
 * wake a read; the read finds the change.
 */
import { createHash } from 'node:crypto';

/** How long event identities are kept against a repeated delivery (Affinity retries for up to 10 hours). */
export const AFFINITY_WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;

/** The events Lockstep subscribes to: those about the records of the tables it syncs. */
export const AFFINITY_WEBHOOK_EVENTS = [
  'person.created',
  'person.updated',
  'person.deleted',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.merged',
  'opportunity.created',
  'opportunity.updated',
  'opportunity.deleted',
  'list_entry.created',
  'list_entry.deleted',
  'field_value.created',
  'field_value.updated',
  'field_value.deleted',
] as const;

/** Affinity allows three webhook subscriptions per account. */
export const AFFINITY_MAX_WEBHOOK_SUBSCRIPTIONS = 3;

export type AffinityWebhookEvent = {
  /** `affinity:` and the SHA-256 of the raw delivery (Affinity gives events no id). */
  eventId: string;
  /** `person.updated`, ... */
  type: string;
  /** When Affinity sent it (ms), or null when the delivery does not say. */
  sentAtMs: number | null;
  /** The tables the event is about: `persons`, `companies`, `opportunities`, `list-<id>`. */
  tableRemoteIds: string[];
  /**
   * Whether it may also be about any list table (`list-<id>`) the body does not name: a person's or
   * company's name and global fields show in the entries of the lists holding it, and a field
   * value names its list entry but not the entry's list.
   */
  anyList: boolean;
};

const record = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const listTable = (v: unknown) =>
  typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v)) ? `list-${v}` : null;

/** A delivery's event; null when the body is not one (not JSON, or no `type`). */
export function parseAffinityWebhook(raw: string): AffinityWebhookEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  const envelope = record(parsed);
  const type = typeof envelope?.type === 'string' ? envelope.type : '';
  if (!envelope || !type) return null;
  const body = record(envelope.body) ?? {};
  const sentAt = typeof envelope.sent_at === 'number' ? envelope.sent_at : Number(envelope.sent_at);
  const eventId = `affinity:${createHash('sha256').update(raw).digest('base64url')}`;
  const [object] = type.split('.');
  const tables = new Set<string>();
  let anyList = false;
  switch (object) {
    case 'person':
      tables.add('persons');
      // A person gone (or merged away) leaves the opportunities it was linked to.
      if (type !== 'person.created' && type !== 'person.updated') tables.add('opportunities');
      anyList = true;
      break;
    case 'organization':
      tables.add('companies');
      // Its persons are the persons' Organizations links, kept on the persons table.
      tables.add('persons');
      if (type !== 'organization.created' && type !== 'organization.updated') tables.add('opportunities');
      anyList = true;
      break;
    case 'opportunity': {
      tables.add('opportunities');
      // An opportunity is in one list: its entries name it (else any list may hold it).
      const entries = Array.isArray(body.list_entries) ? body.list_entries : [];
      for (const e of entries) {
        const t = listTable(record(e)?.list_id);
        if (t) tables.add(t);
      }
      if (tables.size === 1) anyList = true;
      break;
    }
    case 'list_entry': {
      const t = listTable(body.list_id);
      if (t) tables.add(t);
      else anyList = true;
      break;
    }
    case 'field_value': {
      // A list-specific value belongs to an entry of some list; a global one to a person or a
      // company (the body does not say which), shown in the lists holding it too.
      const global = body.list_entry_id === null || body.list_entry_id === undefined;
      if (global) {
        tables.add('persons');
        tables.add('companies');
      }
      anyList = true;
      break;
    }
  }
  return {
    eventId,
    type,
    sentAtMs: Number.isFinite(sentAt) && sentAt > 0 ? sentAt * 1000 : null,
    tableRemoteIds: [...tables],
    anyList,
  };
}

/** The table remote ids (among `known`, the connection's tables) that an event wakes. */
export function affinityTablesWoken(event: AffinityWebhookEvent, known: string[]): string[] {
  return known.filter((t) => event.tableRemoteIds.includes(t) || (event.anyList && /^list-\d+$/.test(t)));
}
