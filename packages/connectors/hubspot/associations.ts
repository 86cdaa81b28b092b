/**
 * HubSpot associations as linked-record fields (canonical type `relations`, `options.references`
 * the other object type, values the other records' HubSpot ids, as the runtime's relations expect).
 *
 * - Fields: a contact's Companies, a company's Contacts, a deal's Contacts and Companies; their
 *   remote ids are `associations.{type}` (a dot: no HubSpot property name can take it).
 * - An association is one two-way link in HubSpot, shown on both records. Of each pair of sides one
 *   is written (a contact's Companies, a deal's Contacts and Companies); the other (a company's
 *   Contacts) is read-only, so one link is never written from two fields that may disagree (a
 *   company's list emptied on one side would undo what a contact's list said on another).
 * - Values: every association between the two records counts, whatever its labels (unlabeled,
 *   Primary, custom); written as HubSpot's default (unlabeled) association. Which company is a
 *   contact's primary one is not carried (the value is a set of ids).
 * - Reads: list pages ask for `associations=` (no extra request); records found otherwise (search,
 *   by id, after a write) are read with the v4 batch read, 1,000 ids a request (HubSpot's limit),
 *   following a record's own paging when it has more than a page of associations.
 * - Writes: the new list is compared with what HubSpot holds right before the write; the ids to add
 *   go in `batch/associate/default`, then those to drop in `batch/archive`, 100 pairs a request. Adding
 *   an association that exists and removing one that does not change nothing, so a retry is safe.
 */
import { ConnectorError } from '../sdk/connector';
import type { HubSpotClient } from './hubspot-api';
import { hubspotUserMessage } from './hubspot-api';

export type HubSpotAssociationField = {
  /** The field's remote id. */
  field: string;
  /** The object type it links to (that table's remote id). */
  to: string;
  name: string;
  /** Written through this side (the other side of the same link is read-only). */
  writable: boolean;
  /** The HubSpot-defined unlabeled association type from this side, for creates. */
  typeId: number;
};

export const HUBSPOT_ASSOCIATIONS: Record<string, HubSpotAssociationField[]> = {
  contacts: [
    { field: 'associations.companies', to: 'companies', name: 'Companies', writable: true, typeId: 279 },
  ],
  companies: [
    { field: 'associations.contacts', to: 'contacts', name: 'Contacts', writable: false, typeId: 280 },
  ],
  deals: [
    { field: 'associations.contacts', to: 'contacts', name: 'Contacts', writable: true, typeId: 3 },
    { field: 'associations.companies', to: 'companies', name: 'Companies', writable: true, typeId: 341 },
  ],
};

/** The v4 batch read takes at most 1,000 ids (HubSpot's changelog, February 2025). */
export const HUBSPOT_ASSOCIATION_READ_BATCH = 1000;
/** Pairs per v4 batch associate/archive request (HubSpot documents no number; its CRM batches take 100). */
export const HUBSPOT_ASSOCIATION_WRITE_BATCH = 100;

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal' };

/** The association fields of an object type (none for a type Lockstep does not link). */
export function associationFieldsOf(type: string): HubSpotAssociationField[] {
  return HUBSPOT_ASSOCIATIONS[type.trim().toLowerCase()] ?? [];
}

/** Ids as a relation value: sorted, unique, strings; none is null. */
export function relationValue(ids: Iterable<string> | undefined): string[] | null {
  const list = [...new Set([...(ids ?? [])].map(String).filter((id) => id !== ''))].sort();
  return list.length > 0 ? list : null;
}

/** A relation value (canonical or as written) as its ids. */
export function idsOf(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return [...new Set(list.map(String).filter((id) => id !== ''))];
}

/** field -> record id -> associated ids. */
export type AssociationValues = Map<string, Map<string, string[]>>;

type BatchReadAnswer = {
  results?: {
    from: { id: string | number };
    to?: { toObjectId: string | number }[];
    paging?: { next?: { after?: string } };
  }[];
};

/**
 * The associations of records, per field of the type: v4 batch reads of at most 1,000 ids, and for
 * a record with more than a page of them the next pages (its id with `after`) in the next request.
 */
export async function readAssociations(
  client: HubSpotClient,
  type: string,
  ids: string[],
  fields: HubSpotAssociationField[] = associationFieldsOf(type),
): Promise<AssociationValues> {
  const out: AssociationValues = new Map();
  const unique = [...new Set(ids)];
  for (const f of fields) {
    const byId = new Map<string, string[]>();
    out.set(f.field, byId);
    let queue: { id: string; after?: string }[] = unique.map((id) => ({ id }));
    while (queue.length > 0) {
      const inputs = queue.slice(0, HUBSPOT_ASSOCIATION_READ_BATCH);
      queue = queue.slice(HUBSPOT_ASSOCIATION_READ_BATCH);
      const { body } = await client.request<BatchReadAnswer>({
        method: 'POST',
        path: `/crm/v4/associations/${encodeURIComponent(type)}/${encodeURIComponent(f.to)}/batch/read`,
        body: { inputs },
        idempotent: true,
      });
      // Ids with nothing associated come back as errors (207): they simply hold no ids.
      for (const r of body.results ?? []) {
        const from = String(r.from.id);
        const list = byId.get(from) ?? [];
        for (const t of r.to ?? []) list.push(String(t.toObjectId));
        byId.set(from, list);
        const after = r.paging?.next?.after;
        if (after) queue.push({ id: from, after });
      }
    }
  }
  return out;
}

type BatchWriteAnswer = {
  results?: unknown[];
  errors?: { category?: string; message?: string; context?: { ids?: string[] } }[];
};

export type AssociationChange = {
  /** The record written (this side's id). */
  id: string;
  field: HubSpotAssociationField;
  add: string[];
  remove: string[];
};

/**
 * Adds and removes associations (adds first; a record one of whose adds failed is not touched
 * further); answers, per record id, the error that kept one of its associations from being made
 * (a record on either end that no longer exists).
 */
export async function writeAssociations(
  client: HubSpotClient,
  type: string,
  changes: AssociationChange[],
): Promise<Map<string, ConnectorError>> {
  const failed = new Map<string, ConnectorError>();
  const base = (to: string) =>
    `/crm/v4/associations/${encodeURIComponent(type)}/${encodeURIComponent(to)}/batch`;
  const byField = new Map<string, AssociationChange[]>();
  for (const c of changes) byField.set(c.field.field, [...(byField.get(c.field.field) ?? []), c]);
  for (const list of byField.values()) {
    const to = (list[0] as AssociationChange).field.to;
    // Adding first: a record whose new link cannot be made keeps the links it had (it fails whole).
    const adds = list.flatMap((c) => c.add.map((toId) => ({ from: c.id, to: toId })));
    for (let i = 0; i < adds.length; i += HUBSPOT_ASSOCIATION_WRITE_BATCH) {
      const chunk = adds.slice(i, i + HUBSPOT_ASSOCIATION_WRITE_BATCH);
      const { body } = await client.request<BatchWriteAnswer>({
        method: 'POST',
        path: `${base(to)}/associate/default`,
        body: { inputs: chunk.map((p) => ({ from: { id: p.from }, to: { id: p.to } })) },
        // An association made twice is one association.
        idempotent: true,
      });
      const missing = new Set((body.errors ?? []).flatMap((e) => e.context?.ids ?? []).map(String));
      if (missing.size === 0) continue;
      for (const p of chunk) {
        if (failed.has(p.from)) continue;
        if (missing.has(p.from))
          failed.set(
            p.from,
            new ConnectorError(
              'not_found',
              `HubSpot ${SINGULAR[type] ?? type} ${p.from} not found`,
              hubspotUserMessage('not_found'),
            ),
          );
        else if (missing.has(p.to))
          failed.set(
            p.from,
            new ConnectorError(
              'validation',
              `HubSpot ${SINGULAR[to] ?? to} ${p.to} not found: not associated`,
              `The linked HubSpot ${SINGULAR[to] ?? to} (${p.to}) no longer exists, so it could not be linked.`,
            ),
          );
      }
    }
    const removes = list.filter((c) => c.remove.length > 0 && !failed.has(c.id));
    for (let i = 0; i < removes.length; ) {
      const inputs: { from: { id: string }; to: { id: string }[] }[] = [];
      let pairs = 0;
      while (i < removes.length && pairs < HUBSPOT_ASSOCIATION_WRITE_BATCH) {
        const c = removes[i] as AssociationChange;
        inputs.push({ from: { id: c.id }, to: c.remove.map((id) => ({ id })) });
        pairs += c.remove.length;
        i++;
      }
      // Removing what is gone already is a 204 as well: safe to send again.
      await client.request({
        method: 'POST',
        path: `${base(to)}/archive`,
        body: { inputs },
        idempotent: true,
      });
    }
  }
  return failed;
}
