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
import {
  type AssociationChange,
  type AssociationValues,
  associationFieldsOf,
  idsOf,
  readAssociations,
  relationValue,
  writeAssociations,
} from './associations';
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
/**
 * How often a type with association fields is read whole again (its list, associations included):
 * HubSpot does not document that an association change moves a record's last-modified time, so the
 * incremental search cannot be trusted to find one. At least this long apart, and at least 6 s per
 * list page the last sweep took (a sweep never spends more than ~14,400 requests a day per table).
 */
export const HUBSPOT_ASSOCIATION_SWEEP_MS = 15 * 60_000;
export const HUBSPOT_SWEEP_MS_PER_PAGE = 6_000;

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

type ScanCursor = { v: 1; mode: 'scan'; after?: string; since: number; pages?: number };
type ChangesCursor = {
  v: 1;
  mode: 'changes';
  /** This read's lower bound (ms): the last-modified GTE filter, and archivedAt's. */
  since: number;
  /** The next read's lower bound: this read's start (server time) minus the overlap. */
  next: number;
  /** A read is under way (its sweep, search or archived listing continues on the next page). */
  active?: true;
  /** This read's first answer has not fixed `next` yet. */
  unfixed?: true;
  stage: 'sweep' | 'search' | 'archived';
  /** When the last whole read (the first scan or a sweep) began, and how many list pages it took. */
  swept?: number;
  sweptPages?: number;
  /** Paging of a sweep under way: where its list continues, when it began, pages so far. */
  sweepAfter?: string;
  sweepStart?: number;
  sweepPages?: number;
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
  /** A list page's `associations=`: per object type, the associated ids (paged past a limit). */
  associations?: Record<string, { results?: { id: string }[]; paging?: { next?: { after?: string } } }>;
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
  /** How often a type with associations is swept (15 minutes; see HUBSPOT_ASSOCIATION_SWEEP_MS). */
  associationSweepMs?: number;
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

/**
 * Discovered fields of a type: synced properties (not hidden or archived), canonically typed, and
 * (given the type) its associations as linked-record fields (associations.ts).
 */
export function hubspotFields(properties: HubSpotProperty[], type?: string): HubSpotField[] {
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
  for (const a of type ? associationFieldsOf(type) : [])
    fields.push({
      remoteId: a.field,
      name: a.name,
      fieldType: 'relations',
      readOnly: !a.writable,
      options: { references: a.to, hubspotAssociation: { to: a.to, typeId: a.typeId } },
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
  const sweepMs = options.associationSweepMs ?? HUBSPOT_ASSOCIATION_SWEEP_MS;
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

  /**
   * Records with their association fields: a list page's own `associations=` where it holds them
   * all, the v4 batch read (1,000 ids a request) for the rest (search hits, reads by id, a record
   * whose associations page past the list's).
   */
  async function recordsOf(
    tableId: string,
    props: HubSpotProperty[],
    objects: ApiObject[],
    listed = false,
  ): Promise<RecordData[]> {
    const links = associationFieldsOf(tableId);
    const records = objects.map((o) => toRecord(props, o));
    if (links.length === 0 || objects.length === 0) return records;
    const partial = (o: ApiObject) =>
      !listed || links.some((l) => o.associations?.[l.to]?.paging?.next?.after !== undefined);
    const ask = objects.filter(partial).map((o) => String(o.id));
    const read_ = ask.length > 0 ? await readAssociations(client, typeOf(tableId), ask, links) : new Map();
    const asked = new Set(ask);
    objects.forEach((o, k) => {
      const r = records[k] as RecordData;
      for (const l of links) {
        const ids = asked.has(String(o.id))
          ? read_.get(l.field)?.get(String(o.id))
          : o.associations?.[l.to]?.results?.map((x) => String(x.id));
        r.fields[l.field] = relationValue(ids);
      }
    });
    return records;
  }

  /** The `associations=` a list page asks for (the types this one links to). */
  const listAssociations = (tableId: string) => {
    const to = associationFieldsOf(tableId).map((l) => l.to);
    return to.length > 0 ? to.join(',') : undefined;
  };

  /**
   * One list page (GET, `after`): records with their properties and associations. Portals with
   * hundreds of properties make a URL too long to send: the page's ids are then listed alone and
   * its records read by id with the properties in a POST body.
   */
  async function listPage(
    tableId: string,
    names: string[],
    limit: number,
    after: string | undefined,
  ): Promise<{ objects: ApiObject[]; after: string | undefined; headers: Headers }> {
    const type = typeOf(tableId);
    const byId = names.join(',').length > maxUrlProperties;
    const res = await client.request<{ results: ApiObject[]; paging?: { next?: { after?: string } } }>({
      method: 'GET',
      path: `/crm/v3/objects/${type}`,
      query: {
        limit,
        properties: byId ? 'hs_object_id' : names.join(','),
        associations: listAssociations(tableId),
        archived: 'false',
        after,
      },
    });
    let objects = res.body.results;
    if (byId) {
      const live = new Map(
        (
          await batchRead(
            type,
            objects.map((o) => String(o.id)),
            names,
          )
        ).map((o) => [String(o.id), o]),
      );
      // One archived or merged between the two requests is left out (the next read reports it).
      objects = objects.flatMap((o) => {
        const l = live.get(String(o.id));
        return l ? [{ ...l, ...(o.associations ? { associations: o.associations } : {}) }] : [];
      });
    }
    return { objects, after: res.body.paging?.next?.after, headers: res.headers };
  }

  /**
   * Whether a read starting from an idle cursor sweeps first (see HUBSPOT_ASSOCIATION_SWEEP_MS).
   * Times are HubSpot's (its Date header): the previous read began at `next` plus the overlap.
   */
  function sweepDue(tableId: string, c: ChangesCursor): boolean {
    if (associationFieldsOf(tableId).length === 0) return false;
    const every = Math.max(sweepMs, (c.sweptPages ?? 0) * HUBSPOT_SWEEP_MS_PER_PAGE);
    return c.next + overlap - (c.swept ?? 0) >= every;
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
      let pages = c?.pages ?? 0;
      do {
        const page = await listPage(
          tableId,
          names,
          Math.min(HUBSPOT_MAX_PAGE_SIZE, want - objects.length),
          after,
        );
        since ??= serverTime(page.headers) - overlap;
        pages++;
        objects.push(...page.objects);
        after = page.after;
      } while (after && objects.length < want);
      for (const o of objects) for (const id of mergedAway(o)) deleted.add(id);
      const hasMore = after !== undefined;
      const start = since as number;
      // The first scan counts as a sweep (begun at its first answer, before the overlap was taken):
      // associations were read with every record.
      const next: ReadCursor = hasMore
        ? { v: 1, mode: 'scan', after, since: start, pages }
        : {
            v: 1,
            mode: 'changes',
            since: start,
            next: start,
            stage: 'search',
            swept: start + overlap,
            sweptPages: pages,
          };
      return {
        records: await recordsOf(tableId, props, objects, true),
        deletedIds: [...deleted],
        nextCursor: encode(next),
        hasMore,
        scanComplete: !c && !hasMore,
      };
    }

    // Incremental. An idle cursor (the previous read finished) starts a new read from where that
    // read began (minus the overlap), first sweeping the whole type when that is due; an active one
    // continues this read's sweep, search or archived listing.
    let state: ChangesCursor = c.active
      ? c
      : {
          ...c,
          since: c.next,
          active: true,
          unfixed: true,
          stage: sweepDue(tableId, c) ? 'sweep' : 'search',
          from: undefined,
          after: undefined,
          archivedAfter: undefined,
        };
    /** The first answer of a read fixes (by server time) where the next read begins. */
    const fix = (headers: Headers) => {
      if (!state.unfixed) return;
      const { unfixed: _, ...rest } = state;
      state = { ...rest, next: serverTime(headers) - overlap };
    };
    const objects: ApiObject[] = [];
    const listed: ApiObject[] = [];
    const seen = new Set<string>();

    // A sweep: the whole list again, associations included (they change without a modification
    // time the search could find). The search that follows still starts at `since`.
    while (state.stage === 'sweep' && listed.length < want) {
      const page = await listPage(
        tableId,
        names,
        Math.min(HUBSPOT_MAX_PAGE_SIZE, want - listed.length),
        state.sweepAfter,
      );
      fix(page.headers);
      const start = state.sweepStart ?? serverTime(page.headers);
      const pages = (state.sweepPages ?? 0) + 1;
      for (const o of page.objects) {
        for (const id of mergedAway(o)) deleted.add(id);
        seen.add(String(o.id));
        listed.push(o);
      }
      state = page.after
        ? { ...state, sweepAfter: page.after, sweepStart: start, sweepPages: pages }
        : {
            ...state,
            stage: 'search',
            swept: start + overlap,
            sweptPages: pages,
            sweepAfter: undefined,
            sweepStart: undefined,
            sweepPages: undefined,
          };
    }

    const lastMod = lastModifiedProperty(tableId);
    while (state.stage === 'search' && listed.length + objects.length < want) {
      const from = state.from ?? state.since;
      const offset = state.after ?? 0;
      const limit = Math.max(1, Math.min(searchPage, want - listed.length - objects.length, cap - offset));
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
      fix(res.headers);
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
        objects.push(now_);
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
    if (state.stage === 'archived' && listed.length + objects.length < want) {
      // The archived listing has no time filter: its pages are walked, keeping what was archived
      // since this read's lower bound (at most 50 pages a call; the cursor keeps the place).
      let after = state.archivedAfter;
      for (let pages = 0; pages < 50; pages++) {
        const res = await client.request<{ results: ApiObject[]; paging?: { next?: { after?: string } } }>({
          method: 'GET',
          path: `/crm/v3/objects/${type}`,
          query: { limit: HUBSPOT_MAX_PAGE_SIZE, archived: 'true', properties: 'hs_object_id', after },
        });
        fix(res.headers);
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
        state = {
          v: 1,
          mode: 'changes',
          since: state.next,
          next: state.next,
          stage: 'search',
          ...(state.swept !== undefined ? { swept: state.swept } : {}),
          ...(state.sweptPages !== undefined ? { sweptPages: state.sweptPages } : {}),
        };
      }
    }
    const records = [
      ...(await recordsOf(tableId, props, listed, true)),
      ...(await recordsOf(tableId, props, objects)),
    ];
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
    tableId: string,
    all: HubSpotProperty[],
    props: HubSpotProperty[],
    names: string[],
    items: { id: string; expected?: Record<string, CanonicalValue> }[],
    opts: { every?: boolean; associationsOf?: string[] } = {},
  ): Promise<{
    changed: Map<string, RecordData | null>;
    present: Set<string>;
    associations: AssociationValues;
  }> {
    const type = typeOf(tableId);
    const links = associationFieldsOf(tableId);
    const linkOf = (name: string) => links.find((l) => l.field === name);
    const checked = items.filter((x) => x.expected && Object.keys(x.expected).length > 0);
    const out = new Map<string, RecordData | null>();
    const toRead = opts.every
      ? items
      : [...checked, ...(opts.associationsOf ?? []).map((id) => ({ id, expected: undefined }))];
    if (toRead.length === 0) return { changed: out, present: new Set(), associations: new Map() };
    const wanted = withNameParts([
      ...new Set([
        ...names,
        ...checked.flatMap((x) => Object.keys(x.expected ?? {})).filter((n) => !linkOf(n)),
      ]),
    ]);
    const objects = await batchRead(type, [...new Set(toRead.map((x) => x.id))], wanted);
    const byId = new Map(objects.map((o) => [String(o.id), o]));
    // Associations of the records whose expected values name one, and of those a write changes.
    const ask = new Set(
      [
        ...checked.filter((x) => Object.keys(x.expected ?? {}).some((n) => linkOf(n))).map((x) => x.id),
        ...(opts.associationsOf ?? []),
      ].filter((id) => byId.has(id)),
    );
    const associations =
      ask.size > 0 ? await readAssociations(client, type, [...ask], links) : (new Map() as AssociationValues);
    const stale: ApiObject[] = [];
    for (const x of checked) {
      const o = byId.get(x.id);
      // Not found under its own id: archived, or merged into another record.
      if (!o) {
        out.set(x.id, null);
        continue;
      }
      for (const [name, expected] of Object.entries(x.expected ?? {})) {
        const link = linkOf(name);
        if (link) {
          const want = normalizeValue('relations', expected ?? null);
          const now = relationValue(associations.get(link.field)?.get(x.id));
          if (!want.ok || !valuesEqual(want.value, now)) {
            stale.push(o);
            break;
          }
          continue;
        }
        if (name === FULL_NAME) {
          const want = normalizeValue('text', expected ?? null);
          const now = joinName(o.properties.firstname, o.properties.lastname);
          if (!want.ok || !valuesEqual(want.value, now)) {
            stale.push(o);
            break;
          }
          continue;
        }
        const p = all.find((q) => q.name === name);
        const type_ = p && canonicalType(p);
        if (!p || !type_) continue;
        const want = normalizeValue(type_, expected ?? null);
        if (!want.ok || !valuesEqual(want.value, toCanonical(p, o.properties[name]))) {
          stale.push(o);
          break;
        }
      }
    }
    // What a changed record holds now, associations included (the runtime compares it whole).
    if (stale.length > 0) {
      const missing = stale.map((o) => String(o.id)).filter((id) => !ask.has(id));
      if (missing.length > 0 && links.length > 0) {
        const more = await readAssociations(client, type, missing, links);
        for (const [field, byRecord] of more)
          for (const [id, ids] of byRecord) {
            if (!associations.has(field)) associations.set(field, new Map());
            associations.get(field)?.set(id, ids);
          }
        for (const id of missing) ask.add(id);
      }
      for (const o of stale) {
        const r = toRecord(props, o);
        for (const l of links)
          r.fields[l.field] = relationValue(associations.get(l.field)?.get(String(o.id)));
        out.set(String(o.id), r);
      }
    }
    return { changed: out, present: new Set(byId.keys()), associations };
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
    // Association fields this side writes (the read-only side of a link is left alone, as a
    // read-only property is).
    const writable = associationFieldsOf(tableId).filter((l) => l.writable);
    const linksIn = (fields: Record<string, CanonicalValue>) => writable.filter((l) => l.field in fields);
    /** A postImage's association fields: the lists as written. */
    const withLinks = (r: RecordData, fields: Record<string, CanonicalValue>): RecordData => {
      for (const l of linksIn(fields)) r.fields[l.field] = relationValue(idsOf(fields[l.field]));
      return r;
    };
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
          // A new record's associations go in its create (HubSpot's unlabeled type for each link):
          // made with the record, or refused with it.
          const inputs = chunk.map(({ r }) => {
            const fields = (r as Extract<WriteRequest, { kind: 'create' }>).fields;
            const associations = linksIn(fields).flatMap((l) =>
              idsOf(fields[l.field]).map((id) => ({
                to: { id },
                types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: l.typeId }],
              })),
            );
            return {
              properties: propsFor(all, fields),
              ...(associations.length > 0 ? { associations } : {}),
            };
          });
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
            const fields = (r as Extract<WriteRequest, { kind: 'create' }>).fields;
            return {
              ok: true as const,
              remoteId: String(o.id),
              postImage: withLinks(toRecord(props, o, true), fields),
            };
          });
        });
        const byKey = new Map(pending.map(({ r }, k) => [r.idempotencyKey, done[k]!]));
        const retried = group.filter(({ r }) => !byKey.has(r.idempotencyKey));
        // A retried create: answered with the record made the first time.
        const again = new Map<string, RecordData>();
        if (retried.length > 0) {
          const ids = retried.map(({ r }) => idempotent.get(r.idempotencyKey) as string);
          for (const rec of await recordsOf(tableId, props, await batchRead(type, ids, names)))
            again.set(rec.id, rec);
        }
        groupResults = group.map(({ r }) => {
          const fresh = byKey.get(r.idempotencyKey);
          if (fresh) return fresh;
          const id = idempotent.get(r.idempotencyKey) as string;
          const rec = again.get(id);
          return rec ? { ok: true as const, remoteId: id, postImage: rec } : notFound(id);
        });
      } else if (kind === 'update') {
        groupResults = await batched(group, async (whole) => {
          const upd = (r: WriteRequest) => r as Extract<WriteRequest, { kind: 'update' }>;
          // Records whose associations this write sets: what HubSpot holds now is read with the
          // check (one v4 batch read per link), and only the difference is written.
          const linking = whole
            .filter(({ r }) => linksIn(upd(r).fields).length > 0)
            .map(({ r }) => upd(r).remoteId);
          const {
            changed: stale,
            present,
            associations: live,
          } = await changedSince(
            tableId,
            all,
            props,
            names,
            whole.map(({ r }) => ({
              id: upd(r).remoteId,
              ...(upd(r).expected ? { expected: upd(r).expected } : {}),
            })),
            { associationsOf: linking },
          );
          const chunk = whole.filter(({ r }) => !stale.has(upd(r).remoteId));
          // An update that sets associations only sends no properties (HubSpot keeps its modified time).
          const linkOnly = (u: Extract<WriteRequest, { kind: 'update' }>) =>
            linksIn(u.fields).length > 0 && Object.keys(propsFor(all, u.fields)).length === 0;
          const inputs = chunk
            .filter(({ r }) => !linkOnly(upd(r)))
            .map(({ r }) => ({ id: upd(r).remoteId, properties: propsFor(all, upd(r).fields) }));
          const written = new Map<string, WriteResult>();
          if (inputs.length > 0) {
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
            for (const { id } of inputs) {
              const o = byId.get(id);
              if (o)
                written.set(id, { ok: true as const, remoteId: id, postImage: toRecord(props, o, true) });
              else if (missing.has(id)) {
                const e = errorFor(id);
                written.set(id, failure(mapHubSpotError(404, e ?? { category: 'OBJECT_NOT_FOUND' })));
              } else {
                const moved = others.shift();
                written.set(
                  id,
                  moved
                    ? { ok: true as const, remoteId: id, postImage: toRecord(props, moved, true) }
                    : notFound(id),
                );
              }
            }
          }
          for (const { r } of chunk) {
            const id = upd(r).remoteId;
            if (!linkOnly(upd(r))) continue;
            written.set(
              id,
              present.has(id)
                ? { ok: true as const, remoteId: id, postImage: { id, fields: {} } }
                : notFound(id),
            );
          }
          // The associations: the new lists against what HubSpot holds, for the records written.
          const changes: AssociationChange[] = [];
          for (const { r } of chunk) {
            const u = upd(r);
            if (!written.get(u.remoteId)?.ok) continue;
            for (const l of linksIn(u.fields)) {
              const want = new Set(idsOf(u.fields[l.field]));
              const now = new Set(live.get(l.field)?.get(u.remoteId) ?? []);
              const add = [...want].filter((x) => !now.has(x));
              const remove = [...now].filter((x) => !want.has(x));
              if (add.length > 0 || remove.length > 0)
                changes.push({ id: u.remoteId, field: l, add, remove });
            }
          }
          const refused = changes.length > 0 ? await writeAssociations(client, type, changes) : new Map();
          return whole.map(({ r }) => {
            const u = upd(r);
            if (stale.has(u.remoteId)) return conflict(tableId, u.remoteId, stale.get(u.remoteId) ?? null);
            const e = refused.get(u.remoteId);
            if (e) return failure(e);
            const result = written.get(u.remoteId) ?? notFound(u.remoteId);
            if (result.ok && result.postImage) withLinks(result.postImage, u.fields);
            return result;
          });
        });
      } else {
        groupResults = await batched(group, async (whole) => {
          const del = (r: WriteRequest) => r as Extract<WriteRequest, { kind: 'delete' }>;
          // Every id is read first: one gone already (archived, or merged into another record, whose
          // id a write would land on) is not archived again; one edited since it was read is spared.
          const { changed, present } = await changedSince(
            tableId,
            all,
            props,
            names,
            whole.map(({ r }) => ({
              id: del(r).remoteId,
              ...(del(r).expected ? { expected: del(r).expected } : {}),
            })),
            { every: true },
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
      return hubspotFields(await describe(type), type);
    },
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const { props, names } = await readProps(tableId);
      const objects = await batchRead(typeOf(tableId), [...new Set(ids)], names);
      // A merged-away id resolves to the merge: only the records asked for by their own id.
      const wanted = new Set(ids);
      return recordsOf(
        tableId,
        props,
        objects.filter((o) => wanted.has(String(o.id))),
      );
    },
  };
}
