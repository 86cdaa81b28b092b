/**
 * HubSpot CRM as a sync side (a TableConnector), one table per object type (`contacts`,
 * `companies`, `deals`; the table's remote id is the type), on the CRM v3 API through the SDK's
 * HttpClient and RateLimiter (hubspot-api.ts):
 * - read: a full scan pages `GET /crm/v3/objects/{type}?limit=100&after=&properties=` (the properties
 *   of the schema the connector discovers, at most a minute old); afterwards incremental reads with
 *   `POST /crm/v3/objects/{type}/search` filtered on the last-modified property GTE the start of the
 *   previous read minus an overlap (30 s: the search index lags writes by seconds; the engine drops the
 *   re-read echoes), sorted ascending, paged by keyset: each next query starts from the last
 *   modification time seen, so none passes HubSpot's 10,000-result cap (never stopping silently)
 *   and an edit during the read does not shift a record out of reach. The records a
 *   search finds are read live by id (`batch/read`): the index can hold a record's older values.
 * - deletes: HubSpot archives. At the end of an incremental read the archived listing
 *   (`GET ...?archived=true`, paged) gives the ids archived since the previous read started (minus the
 *   overlap), reported as `deletedIds`. A merge leaves the merged ids gone and makes a new record whose
 *   `hs_merged_object_ids` names them: those ids are reported deleted when the new record is read.
 * - values: every value is a string on the wire; converted per property type to canonical values and
 *   back (see canonicalType / toCanonical / fromCanonical).
 * - write: batches of <= 100 via batch/create|update|archive. A 207 carries per-item errors; a batch
 *   HubSpot refuses whole (a bad value, a duplicate email) is retried item by item for per-item
 *   results; a duplicate email on create answers `existingId` so the runtime links the records.
 *   Creates are idempotent within the process (a map of idempotency keys): HubSpot has no
 *   idempotency key on create. HubSpot has no conditional update: updates and deletes with `expected`
 *   are checked against a read by id right before the batch (see changedSince).
 */

import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  normalizeValue,
  type RecordData,
  valuesEqual,
} from '@lockstep/engine';
import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import { FULL_NAME, FULL_NAME_PARTS, joinName, splitName, withNameParts } from './full-name';
import {
  createHubSpotClient,
  existingIdOf,
  HUBSPOT_RATE_LIMIT,
  type HubSpotClient,
  type HubSpotClientOptions,
  type HubSpotErrorBody,
  hubspotUserMessage,
  mapHubSpotError,
} from './hubspot-api';

export const HUBSPOT_OBJECT_TYPES = ['contacts', 'companies', 'deals'] as const;
export const HUBSPOT_BATCH_SIZE = 100;
export const HUBSPOT_MAX_PAGE_SIZE = 100;
export const HUBSPOT_SEARCH_PAGE_SIZE = 200;
/** HubSpot's search returns at most 10,000 results per query. */
export const HUBSPOT_SEARCH_RESULT_CAP = 10_000;
/** How far each incremental read reaches back before the previous read's start. */
export const HUBSPOT_READ_OVERLAP_MS = 30_000;

export type HubSpotProperty = {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  options?: { label: string; value: string; hidden?: boolean }[];
  calculated?: boolean;
  hidden?: boolean;
  hubspotDefined?: boolean;
  hasUniqueValue?: boolean;
  archived?: boolean;
  modificationMetadata?: { readOnlyValue?: boolean; readOnlyDefinition?: boolean; archivable?: boolean };
};

/** The last-modified property a search filters on: contacts keep the older name. */
export function lastModifiedProperty(type: string): string {
  return type === 'contacts' || type === 'contact' || type === '0-1'
    ? 'lastmodifieddate'
    : 'hs_lastmodifieddate';
}

/** HubSpot property -> canonical type; undefined means not synced. */
export function canonicalType(p: HubSpotProperty): CanonicalFieldType | undefined {
  switch (p.type) {
    case 'string':
      if (p.name === 'email' || p.fieldType === 'email') return 'email';
      if (p.fieldType === 'phonenumber') return 'phone';
      if (p.fieldType === 'file') return undefined;
      return 'text';
    case 'phone_number':
      return 'phone';
    case 'number':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'enumeration':
      if (p.fieldType === 'checkbox') return 'multi_select';
      if (p.fieldType === 'booleancheckbox') return 'boolean';
      return 'single_select';
    default:
      return undefined;
  }
}

/** Values only HubSpot sets (ids, timestamps, calculated properties). */
export function isReadOnly(p: HubSpotProperty): boolean {
  return (
    p.modificationMetadata?.readOnlyValue === true ||
    p.calculated === true ||
    p.fieldType === 'calculation_equation'
  );
}

/** A HubSpot property value (a string or null on the wire) as a canonical value. */
export function toCanonical(p: HubSpotProperty, raw: string | null | undefined): CanonicalValue {
  const type = canonicalType(p);
  if (!type) return null;
  let value: unknown = raw ?? null;
  if (value === '') value = null;
  if (type === 'multi_select' && typeof value === 'string') value = value.split(';').filter((v) => v !== '');
  if (type === 'datetime' && typeof value === 'string' && /^-?\d+$/.test(value)) value = Number(value);
  const result = normalizeValue(type, value);
  return result.ok ? result.value : null;
}

/** A canonical value as the string HubSpot takes ('' clears a property). */
export function fromCanonical(p: HubSpotProperty, value: CanonicalValue): string {
  if (value === null || value === undefined) return '';
  switch (canonicalType(p)) {
    case 'boolean':
      return value === true ? 'true' : 'false';
    case 'multi_select':
      return Array.isArray(value) ? value.map(String).join(';') : String(value);
    case 'date': {
      const r = normalizeValue('date', value);
      return r.ok && typeof r.value === 'string' ? r.value : String(value);
    }
    case 'datetime': {
      const r = normalizeValue('datetime', value);
      return r.ok && typeof r.value === 'string' ? r.value : String(value);
    }
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

type ScanCursor = { v: 1; mode: 'scan'; after?: string; since: number };
type ChangesCursor = {
  v: 1;
  mode: 'changes';
  /** This read's lower bound (ms): the last-modified GTE filter, and archivedAt's. */
  since: number;
  /** The next read's lower bound: this read's start (server time) minus the overlap. */
  next: number;
  /** A read is under way (its search or archived listing continues on the next page). */
  active?: true;
  stage: 'search' | 'archived';
  /** Where the current search query starts: the last modification time the previous page reached. */
  from?: number;
  /** How many records of the query's first millisecond were read already (they sort first). */
  after?: number;
  /** Paging of the archived listing. */
  archivedAfter?: string;
};
type ReadCursor = ScanCursor | ChangesCursor;

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable cursor means a full rescan. */
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.mode === 'scan' || c.mode === 'changes') && typeof c.since === 'number') return c;
  } catch {
    // fall through
  }
  return null;
}

type ApiObject = {
  id: string;
  properties: Record<string, string | null>;
  createdAt?: string;
  updatedAt?: string;
  archived?: boolean;
  archivedAt?: string;
};

type BatchResponse = {
  status?: string;
  results: ApiObject[];
  numErrors?: number;
  errors?: (HubSpotErrorBody & { context?: { ids?: string[] } })[];
};

export type HubSpotField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
};

export type HubSpotConnectorOptions = Omit<HubSpotClientOptions, 'token'> & {
  /** A private app token, or a function giving the current OAuth access token. */
  token: HubSpotClientOptions['token'];
  /** Defaults to https://api.hubapi.com (the simulator in tests). */
  baseUrl?: string;
  /** Per object type, the properties to read (default: every property discovery reports). */
  properties?: Record<string, string[]>;
  /** The read overlap (30 s). */
  overlapMs?: number;
  /** HubSpot's 10,000 search results (lower in tests of the continuation). */
  searchResultCap?: number;
  /** Past this many characters of property names a scan page is read by id (POST) instead (3,000). */
  maxUrlProperties?: number;
  /** Search page size (HubSpot's maximum, 200). */
  searchPageSize?: number;
  now?: () => number;
};

export type HubSpotConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  /** A type's properties from the properties API (cached for a minute). */
  describe(type: string, refresh?: boolean): Promise<HubSpotProperty[]>;
  /** Canonical field specs of a type, keyed by property name. */
  fieldsOf(type: string): Promise<HubSpotField[]>;
  client: HubSpotClient;
};

export const HUBSPOT_CAPABILITIES: Capabilities = {
  batchSize: HUBSPOT_BATCH_SIZE,
  incrementalRead: true,
  deleteDetection: 'events',
  // App webhooks wake runs (webhooks.ts, the server's /webhooks/hubspot route); they carry no data.
  webhooks: true,
  rateLimit: HUBSPOT_RATE_LIMIT,
  // Every requested property comes back, unset ones as null.
  recordsCarryEveryField: true,
};

const SCHEMA_MAX_AGE_MS = 60_000;

/** Discovered fields of a type: synced properties (not hidden or archived), canonically typed. */
export function hubspotFields(properties: HubSpotProperty[]): HubSpotField[] {
  const fields = properties.flatMap((p): HubSpotField[] => {
    const fieldType = canonicalType(p);
    if (!fieldType || p.hidden || p.archived) return [];
    const choices = (p.options ?? []).filter((o) => !o.hidden).map((o) => o.value);
    return [
      {
        remoteId: p.name,
        name: p.label || p.name,
        fieldType,
        readOnly: isReadOnly(p),
        options: {
          hubspotType: p.type,
          hubspotFieldType: p.fieldType,
          ...((fieldType === 'single_select' || fieldType === 'multi_select') && choices.length > 0
            ? { choices, choiceLabels: Object.fromEntries((p.options ?? []).map((o) => [o.value, o.label])) }
            : {}),
          ...(p.hasUniqueValue ? { unique: true } : {}),
        },
      },
    ];
  });
  // Contacts: a "Full name" made of the first and last names (full-name.ts), when both are writable.
  const writable = (name: string) => fields.some((f) => f.remoteId === name && !f.readOnly);
  if (FULL_NAME_PARTS.every(writable))
    fields.push({
      remoteId: FULL_NAME,
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: { hubspotType: 'string', madeOf: [...FULL_NAME_PARTS] },
    });
  return fields;
}

export function createHubSpotConnector(options: HubSpotConnectorOptions): HubSpotConnector {
  const client = createHubSpotClient(options);
  const now = options.now ?? Date.now;
  const overlap = options.overlapMs ?? HUBSPOT_READ_OVERLAP_MS;
  const cap = options.searchResultCap ?? HUBSPOT_SEARCH_RESULT_CAP;
  const searchPage = Math.max(1, Math.min(options.searchPageSize ?? HUBSPOT_SEARCH_PAGE_SIZE, 200));
  const maxUrlProperties = options.maxUrlProperties ?? 3_000;
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; properties: HubSpotProperty[] }>();

  const typeOf = (tableRemoteId: string) => {
    const t = tableRemoteId.trim().toLowerCase();
    if (!t) throw new ConnectorError('not_found', 'no HubSpot object type', hubspotUserMessage('not_found'));
    return encodeURIComponent(t);
  };

  async function describe(type: string, refresh = false): Promise<HubSpotProperty[]> {
    const known = schemas.get(type);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.properties;
    const { body } = await client.request<{ results: HubSpotProperty[] }>({
      method: 'GET',
      path: `/crm/v3/properties/${typeOf(type)}`,
    });
    schemas.set(type, { at: now(), properties: body.results });
    return body.results;
  }

  /** The properties a read asks for and turns into fields. */
  async function readProps(type: string): Promise<{ props: HubSpotProperty[]; names: string[] }> {
    const all = await describe(type);
    const listed = options.properties?.[type];
    const wanted = listed ? withNameParts(listed) : undefined;
    const synced = new Set(hubspotFields(all).map((f) => f.remoteId));
    const props = all.filter((p) => synced.has(p.name) && (!wanted || wanted.includes(p.name)));
    const names = props.map((p) => p.name);
    // Merges are found through hs_merged_object_ids, asked for even when not synced.
    if (!names.includes('hs_merged_object_ids') && all.some((p) => p.name === 'hs_merged_object_ids'))
      names.push('hs_merged_object_ids');
    return { props, names };
  }

  function toRecord(props: HubSpotProperty[], o: ApiObject, onlyGiven = false): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const p of props) {
      if (onlyGiven && !(p.name in o.properties)) continue;
      fields[p.name] = toCanonical(p, o.properties[p.name]);
    }
    const [first, last] = FULL_NAME_PARTS;
    if (
      props.some((p) => p.name === first) &&
      props.some((p) => p.name === last) &&
      (!onlyGiven || (first in o.properties && last in o.properties))
    )
      fields[FULL_NAME] = joinName(o.properties[first], o.properties[last]);
    return { id: String(o.id), fields };
  }

  /** Ids a merged record replaced (its hs_merged_object_ids, other than itself). */
  function mergedAway(o: ApiObject): string[] {
    const raw = o.properties.hs_merged_object_ids;
    if (!raw) return [];
    return raw.split(';').filter((id) => id !== '' && id !== String(o.id));
  }

  function serverTime(headers: Headers): number {
    const t = Date.parse(headers.get('date') ?? '');
    return Number.isNaN(t) ? now() : t;
  }

  function failure(err: unknown, existingId?: string): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), hubspotUserMessage('transient'));
    return {
      ok: false,
      error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage },
      ...(existingId ? { existingId } : {}),
    };
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const type = typeOf(tableId);
    const { props, names } = await readProps(tableId);
    const want = Math.max(1, opts.pageSize);
    const c = decode(cursor);
    const deleted = new Set<string>();

    if (!c || c.mode === 'scan') {
      const objects: ApiObject[] = [];
      let after = c?.after;
      let since = c?.since;
      // Portals with hundreds of properties make a URL too long to send: the page's ids are then
      // listed alone and its records read by id with the properties in a POST body.
      const byId = names.join(',').length > maxUrlProperties;
      do {
        const res = await client.request<{ results: ApiObject[]; paging?: { next?: { after?: string } } }>({
          method: 'GET',
          path: `/crm/v3/objects/${type}`,
          query: {
            limit: Math.min(HUBSPOT_MAX_PAGE_SIZE, want - objects.length),
            properties: byId ? 'hs_object_id' : names.join(','),
            archived: 'false',
            after,
          },
        });
        since ??= serverTime(res.headers) - overlap;
        if (byId) {
          const live = new Map(
            (
              await batchRead(
                type,
                res.body.results.map((o) => String(o.id)),
                names,
              )
            ).map((o) => [String(o.id), o]),
          );
          // One archived or merged between the two requests is left out (the next read reports it).
          for (const o of res.body.results) {
            const l = live.get(String(o.id));
            if (l) objects.push(l);
          }
        } else objects.push(...res.body.results);
        after = res.body.paging?.next?.after;
      } while (after && objects.length < want);
      for (const o of objects) for (const id of mergedAway(o)) deleted.add(id);
      const hasMore = after !== undefined;
      const start = since as number;
      const next: ReadCursor = hasMore
        ? { v: 1, mode: 'scan', after, since: start }
        : { v: 1, mode: 'changes', since: start, next: start, stage: 'search' };
      return {
        records: objects.map((o) => toRecord(props, o)),
        deletedIds: [...deleted],
        nextCursor: encode(next),
        hasMore,
        scanComplete: !c && !hasMore,
      };
    }

    // Incremental. An idle cursor (the previous read finished) starts a new read from where that
    // read began (minus the overlap); an active one continues this read's search or archived listing.
    let state: ChangesCursor = c.active
      ? c
      : { v: 1, mode: 'changes', since: c.next, next: c.next, active: true, stage: 'search' };
    const fresh = !c.active;
    const records: RecordData[] = [];
    const seen = new Set<string>();
    const lastMod = lastModifiedProperty(tableId);
    while (state.stage === 'search' && records.length < want) {
      const from = state.from ?? state.since;
      const offset = state.after ?? 0;
      const limit = Math.max(1, Math.min(searchPage, want - records.length, cap - offset));
      const res = await client.request<{
        total?: number;
        results: ApiObject[];
        paging?: { next?: { after?: string } };
      }>({
        method: 'POST',
        path: `/crm/v3/objects/${type}/search`,
        body: {
          filterGroups: [{ filters: [{ propertyName: lastMod, operator: 'GTE', value: String(from) }] }],
          sorts: [{ propertyName: lastMod, direction: 'ASCENDING' }],
          properties: [...new Set([...names, lastMod])],
          limit,
          after: String(offset),
        },
        // A search changes nothing: safe to send again.
        idempotent: true,
      });
      // The first request of a read fixes (by server time) where the next read begins.
      if (fresh && records.length === 0 && offset === 0 && state.from === undefined)
        state = { ...state, next: serverTime(res.headers) - overlap };
      // Search answers from its lagging index: a record written in the last seconds can come back
      // with its previous values (Lockstep's own write undone, to the engine's eyes). The values are
      // read live by id (batch/read); an id no longer there under its own id (archived, merged) is
      // left to the archived listing and the merge's hs_merged_object_ids.
      const unseen = res.body.results.filter((o) => !seen.has(String(o.id)));
      const live = new Map(
        (
          await batchRead(
            type,
            unseen.map((o) => String(o.id)),
            names,
          )
        ).map((o) => [String(o.id), o]),
      );
      for (const o of res.body.results) {
        for (const id of mergedAway(o)) deleted.add(id);
        const now_ = live.get(String(o.id));
        if (!now_ || seen.has(String(o.id))) continue;
        seen.add(String(o.id));
        for (const id of mergedAway(now_)) deleted.add(id);
        records.push(toRecord(props, now_));
      }
      const nextAfter = res.body.paging?.next?.after;
      if (nextAfter === undefined || res.body.results.length === 0) {
        state = { ...state, stage: 'archived', from: undefined, after: undefined };
        break;
      }
      // Keyset paging: the next query starts at the last modification time this page reached and
      // skips the records of that millisecond it already gave (they sort first in it). An offset
      // into one long query would slip when a record read earlier is edited (it moves to the end
      // and the rest shift down by one), and no query may pass HubSpot's 10,000 results.
      const times = res.body.results.map((o) => Date.parse(o.properties[lastMod] ?? ''));
      const last = times[times.length - 1] as number;
      const skip = Number.isNaN(last)
        ? Number(nextAfter)
        : last === from
          ? offset + res.body.results.length
          : times.filter((t) => t === last).length;
      if (skip >= cap) {
        throw new ConnectorError(
          'transient',
          `HubSpot search: more than ${cap} ${tableId} modified at ${new Date(from).toISOString()}`,
          'HubSpot holds more changed records with one modification time than its search can list; the sync will retry.',
        );
      }
      state = Number.isNaN(last) ? { ...state, after: skip } : { ...state, from: last, after: skip };
    }

    let finished = false;
    if (state.stage === 'archived' && records.length < want) {
      // The archived listing has no time filter: its pages are walked, keeping what was archived
      // since this read's lower bound (at most 50 pages a call; the cursor keeps the place).
      let after = state.archivedAfter;
      for (let pages = 0; pages < 50; pages++) {
        const res = await client.request<{ results: ApiObject[]; paging?: { next?: { after?: string } } }>({
          method: 'GET',
          path: `/crm/v3/objects/${type}`,
          query: { limit: HUBSPOT_MAX_PAGE_SIZE, archived: 'true', properties: 'hs_object_id', after },
        });
        for (const o of res.body.results) {
          const at = Date.parse(o.archivedAt ?? o.updatedAt ?? '');
          if (Number.isNaN(at) || at >= state.since) deleted.add(String(o.id));
        }
        after = res.body.paging?.next?.after;
        if (!after) break;
      }
      if (after) state = { ...state, archivedAfter: after };
      else {
        finished = true;
        state = { v: 1, mode: 'changes', since: state.next, next: state.next, stage: 'search' };
      }
    }
    // A record read in this page is not deleted (a restored or re-created id).
    for (const r of records) deleted.delete(r.id);
    return {
      records,
      deletedIds: [...deleted],
      nextCursor: encode(state),
      hasMore: !finished,
      scanComplete: false,
    };
  }

  /** Runs a chunk; a batch HubSpot refuses whole for a value or a duplicate is run item by item. */
  async function batched<T>(items: T[], run: (chunk: T[]) => Promise<WriteResult[]>): Promise<WriteResult[]> {
    const out: WriteResult[] = [];
    for (let i = 0; i < items.length; i += HUBSPOT_BATCH_SIZE) {
      const chunk = items.slice(i, i + HUBSPOT_BATCH_SIZE);
      try {
        out.push(...(await run(chunk)));
      } catch (err) {
        const itemLevel =
          err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found');
        // Rate limits, outages and refused credentials concern the whole run: the runtime retries it.
        if (!itemLevel) throw err;
        if (chunk.length === 1) {
          out.push(failure(err, existingIdOf((err as ConnectorError).message)));
          continue;
        }
        for (const item of chunk) {
          try {
            out.push(...(await run([item])));
          } catch (e) {
            if (!(e instanceof ConnectorError && (e.code === 'validation' || e.code === 'not_found')))
              throw e;
            out.push(failure(e, existingIdOf(e.message)));
          }
        }
      }
    }
    return out;
  }

  function propsFor(all: HubSpotProperty[], fields: Record<string, CanonicalValue>): Record<string, string> {
    // The full name first: a first or last name written in the same request wins over its part.
    const out: Record<string, string> = FULL_NAME in fields ? splitName(fields[FULL_NAME] ?? null) : {};
    for (const [name, value] of Object.entries(fields)) {
      const p = all.find((x) => x.name === name);
      if (!p || isReadOnly(p) || !canonicalType(p)) continue;
      out[name] = fromCanonical(p, value);
    }
    return out;
  }

  /** The created object for each input (by the values it holds), in input order. */
  function matchCreated(
    all: HubSpotProperty[],
    inputs: { properties: Record<string, string> }[],
    results: ApiObject[],
  ): (ApiObject | undefined)[] {
    const holds = (input: { properties: Record<string, string> }, o: ApiObject) =>
      Object.entries(input.properties).every(([name, sent]) => {
        const p = all.find((q) => q.name === name);
        if (!p || !(name in o.properties)) return true;
        return valuesEqual(toCanonical(p, sent), toCanonical(p, o.properties[name]));
      });
    const left = [...results];
    const out: (ApiObject | undefined)[] = inputs.map(() => undefined);
    inputs.forEach((input, k) => {
      const same = results[k];
      if (same && left.includes(same) && holds(input, same)) {
        out[k] = same;
        left.splice(left.indexOf(same), 1);
      }
    });
    inputs.forEach((input, k) => {
      if (out[k]) return;
      const at = left.findIndex((o) => holds(input, o));
      if (at >= 0) out[k] = left.splice(at, 1)[0];
    });
    // What HubSpot normalised beyond recognition goes by position among the rest.
    inputs.forEach((_, k) => {
      if (!out[k]) out[k] = left.shift();
    });
    return out;
  }

  async function batchRead(type: string, ids: string[], names: string[]): Promise<ApiObject[]> {
    const out: ApiObject[] = [];
    if (ids.length === 0) return out;
    for (let i = 0; i < ids.length; i += HUBSPOT_BATCH_SIZE) {
      const chunk = ids.slice(i, i + HUBSPOT_BATCH_SIZE);
      const res = await client.request<BatchResponse>({
        method: 'POST',
        path: `/crm/v3/objects/${type}/batch/read`,
        body: { inputs: chunk.map((id) => ({ id })), properties: names, propertiesWithHistory: [] },
        idempotent: true,
      });
      out.push(...res.body.results);
    }
    return out;
  }

  /**
   * HubSpot has no conditional update: right before an update or delete batch, the records with
   * `expected` values are read by id (batch/read, which does not lag like search) and compared. A
   * record changed since Lockstep read it (or gone) answers `version_conflict` with what it holds
   * now, and is not written; the runtime reconciles it again. What is left is the time between this
   * read and the write (milliseconds), not the search index's lag.
   */
  async function changedSince(
    type: string,
    all: HubSpotProperty[],
    props: HubSpotProperty[],
    names: string[],
    items: { id: string; expected?: Record<string, CanonicalValue> }[],
    every = false,
  ): Promise<{ changed: Map<string, RecordData | null>; present: Set<string> }> {
    const checked = items.filter((x) => x.expected && Object.keys(x.expected).length > 0);
    const out = new Map<string, RecordData | null>();
    const toRead = every ? items : checked;
    if (toRead.length === 0) return { changed: out, present: new Set() };
    const wanted = withNameParts([
      ...new Set([...names, ...checked.flatMap((x) => Object.keys(x.expected ?? {}))]),
    ]);
    const objects = await batchRead(type, [...new Set(toRead.map((x) => x.id))], wanted);
    const byId = new Map(objects.map((o) => [String(o.id), o]));
    for (const x of checked) {
      const o = byId.get(x.id);
      // Not found under its own id: archived, or merged into another record.
      if (!o) {
        out.set(x.id, null);
        continue;
      }
      for (const [name, expected] of Object.entries(x.expected ?? {})) {
        if (name === FULL_NAME) {
          const want = normalizeValue('text', expected ?? null);
          const now = joinName(o.properties.firstname, o.properties.lastname);
          if (!want.ok || !valuesEqual(want.value, now)) {
            out.set(x.id, toRecord(props, o));
            break;
          }
          continue;
        }
        const p = all.find((q) => q.name === name);
        const type_ = p && canonicalType(p);
        if (!p || !type_) continue;
        const want = normalizeValue(type_, expected ?? null);
        if (!want.ok || !valuesEqual(want.value, toCanonical(p, o.properties[name]))) {
          out.set(x.id, toRecord(props, o));
          break;
        }
      }
    }
    return { changed: out, present: new Set(byId.keys()) };
  }

  function conflict(tableId: string, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `HubSpot ${tableId} ${id} changed since it was read`,
        userFacingMessage: 'The HubSpot record changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const type = typeOf(tableId);
    const all = await describe(tableId);
    const { props, names } = await readProps(tableId);
    const results: WriteResult[] = new Array(requests.length);
    const notFound = (id: string) =>
      failure(
        new ConnectorError(
          'not_found',
          `HubSpot ${tableId} ${id} not found`,
          hubspotUserMessage('not_found'),
        ),
      );

    let i = 0;
    while (i < requests.length) {
      const kind = requests[i]!.kind;
      let j = i;
      while (j < requests.length && requests[j]!.kind === kind) j++;
      const group = requests.slice(i, j).map((r, k) => ({ r, index: i + k }));
      let groupResults: WriteResult[];
      if (kind === 'create') {
        const pending = group.filter(({ r }) => !idempotent.has(r.idempotencyKey));
        const done = await batched(pending, async (chunk) => {
          const inputs = chunk.map(({ r }) => ({
            properties: propsFor(all, (r as Extract<WriteRequest, { kind: 'create' }>).fields),
          }));
          // Not idempotent: sent twice it would create twice (HubSpot has no idempotency key).
          const res = await client.request<BatchResponse>({
            method: 'POST',
            path: `/crm/v3/objects/${type}/batch/create`,
            body: { inputs },
          });
          // HubSpot does not promise its results in input order: each result goes to the input whose
          // values it holds (the one at its own position first; identical inputs are interchangeable).
          const order = matchCreated(all, inputs, res.body.results);
          return chunk.map(({ r }, k) => {
            const o = order[k];
            if (!o) return notFound(`(create ${k + 1} of ${chunk.length})`);
            idempotent.set(r.idempotencyKey, String(o.id));
            return { ok: true as const, remoteId: String(o.id), postImage: toRecord(props, o, true) };
          });
        });
        const byKey = new Map(pending.map(({ r }, k) => [r.idempotencyKey, done[k]!]));
        const retried = group.filter(({ r }) => !byKey.has(r.idempotencyKey));
        // A retried create: answered with the record made the first time.
        const again = new Map<string, ApiObject>();
        if (retried.length > 0) {
          const ids = retried.map(({ r }) => idempotent.get(r.idempotencyKey) as string);
          for (const o of await batchRead(type, ids, names)) again.set(String(o.id), o);
        }
        groupResults = group.map(({ r }) => {
          const fresh = byKey.get(r.idempotencyKey);
          if (fresh) return fresh;
          const id = idempotent.get(r.idempotencyKey) as string;
          const o = again.get(id);
          return o ? { ok: true as const, remoteId: id, postImage: toRecord(props, o) } : notFound(id);
        });
      } else if (kind === 'update') {
        groupResults = await batched(group, async (whole) => {
          const { changed: stale } = await changedSince(
            type,
            all,
            props,
            names,
            whole.map(({ r }) => {
              const u = r as Extract<WriteRequest, { kind: 'update' }>;
              return { id: u.remoteId, ...(u.expected ? { expected: u.expected } : {}) };
            }),
          );
          const chunk = whole.filter(
            ({ r }) => !stale.has((r as Extract<WriteRequest, { kind: 'update' }>).remoteId),
          );
          const inputs = chunk.map(({ r }) => {
            const u = r as Extract<WriteRequest, { kind: 'update' }>;
            return { id: u.remoteId, properties: propsFor(all, u.fields) };
          });
          if (inputs.length === 0)
            return whole.map(({ r }) => {
              const id = (r as Extract<WriteRequest, { kind: 'update' }>).remoteId;
              return conflict(tableId, id, stale.get(id) ?? null);
            });
          // The same values set twice: safe to retry.
          const res = await client.request<BatchResponse>({
            method: 'POST',
            path: `/crm/v3/objects/${type}/batch/update`,
            body: { inputs },
            idempotent: true,
          });
          const byId = new Map(res.body.results.map((o) => [String(o.id), o]));
          const missing = new Set(
            (res.body.errors ?? []).flatMap((e) => (e.context?.ids as string[] | undefined) ?? []),
          );
          const errorFor = (id: string) =>
            (res.body.errors ?? []).find((e) =>
              ((e.context?.ids as string[] | undefined) ?? []).includes(id),
            );
          // Results HubSpot gave under another id (an update of a merged-away id lands on the merge).
          const others = res.body.results.filter((o) => !inputs.some((x) => x.id === String(o.id)));
          const written = inputs.map(({ id }): WriteResult => {
            const o = byId.get(id);
            if (o) return { ok: true as const, remoteId: id, postImage: toRecord(props, o, true) };
            if (missing.has(id)) {
              const e = errorFor(id);
              return failure(mapHubSpotError(404, e ?? { category: 'OBJECT_NOT_FOUND' }));
            }
            const moved = others.shift();
            return moved
              ? { ok: true as const, remoteId: id, postImage: toRecord(props, moved, true) }
              : notFound(id);
          });
          return whole.map(({ r }) => {
            const id = (r as Extract<WriteRequest, { kind: 'update' }>).remoteId;
            return stale.has(id)
              ? conflict(tableId, id, stale.get(id) ?? null)
              : (written.shift() as WriteResult);
          });
        });
      } else {
        groupResults = await batched(group, async (whole) => {
          const del = (r: WriteRequest) => r as Extract<WriteRequest, { kind: 'delete' }>;
          // Every id is read first: one gone already (archived, or merged into another record, whose
          // id a write would land on) is not archived again; one edited since it was read is spared.
          const { changed, present } = await changedSince(
            type,
            all,
            props,
            names,
            whole.map(({ r }) => ({
              id: del(r).remoteId,
              ...(del(r).expected ? { expected: del(r).expected } : {}),
            })),
            true,
          );
          const spared = new Set([...changed].filter(([, current]) => current !== null).map(([id]) => id));
          const archive = whole.filter(
            ({ r }) => present.has(del(r).remoteId) && !spared.has(del(r).remoteId),
          );
          if (archive.length > 0)
            await client.request({
              method: 'POST',
              path: `/crm/v3/objects/${type}/batch/archive`,
              body: { inputs: archive.map(({ r }) => ({ id: del(r).remoteId })) },
              // Archiving an already archived id is a 204 as well: replays are harmless.
              idempotent: true,
            });
          return whole.map(({ r }) => {
            const id = del(r).remoteId;
            return spared.has(id)
              ? conflict(tableId, id, changed.get(id) ?? null)
              : { ok: true as const, remoteId: id, postImage: null };
          });
        });
      }
      for (const [k, g] of group.entries()) results[g.index] = groupResults[k]!;
      i = j;
    }
    return results;
  }

  return {
    capabilities: HUBSPOT_CAPABILITIES,
    client,
    describe,
    async fieldsOf(type) {
      return hubspotFields(await describe(type));
    },
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const { props, names } = await readProps(tableId);
      const objects = await batchRead(typeOf(tableId), [...new Set(ids)], names);
      // A merged-away id resolves to the merge: only the records asked for by their own id.
      const wanted = new Set(ids);
      return objects.filter((o) => wanted.has(String(o.id))).map((o) => toRecord(props, o));
    },
  };
}
