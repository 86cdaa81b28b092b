/**
 * Attio as a sync side (a TableConnector), one table per object (`people`, `companies`, `deals`
 * and custom objects; the table's remote id is the object's api_slug), on the v2 REST API through
 * the SDK's HttpClient and RateLimiter (attio-api.ts):
 *
 * - read: Attio has no modified-since filter on records (no last-modified attribute to filter or
 *   sort on; `active_from` lives on each value and cannot be queried). Changes are therefore found
 *   by a full scan compared with the last read: every pass pages
 *   `POST /v2/objects/{o}/records/query` (sorted by created_at ascending, so records made during a
 *   pass land after the position; limit <= 500, offset), hashes each record's canonical fields and
 *   compares the hash with the one the cursor keeps for that id. New or changed records are
 *   returned; unchanged ones are not. An edit is never missed: any change of any value changes the
 *   hash, and a record changed after its page was read differs at the next pass.
 * - deletes: each cursor entry carries the parity of the pass that last saw it. At the end of a pass
 *   the ids not seen in it are candidates; they are read by id (`record_id $in`), so an id that an
 *   offset shift (a delete earlier in the order during the pass) made the scan skip is returned as
 *   a record, and only ids Attio no longer has are reported as `deletedIds`. No false delete.
 * - the cursor is committed by the runtime only after a page is applied; it holds the offset in the
 *   pass, its parity, and the packed id -> hash map (deflated).
 * - write: one record per request (Attio has no batch write). Creates assert
 *   (`PUT /records?matching_attribute=`) on a unique attribute the fields fill (people on
 *   email_addresses, companies on domains, else any unique writable attribute), so a create sent
 *   again after a lost answer updates the record it made instead of making a second one; without a
 *   unique value a create is `POST /records`, remembered per idempotency key in the process.
 *   Updates are `PATCH`, or `PUT` when a multiselect attribute is written (PATCH would append to the
 *   list and a two-way sync would grow it each round; PUT replaces it).
 * - conflicts: Attio has no conditional update. Right before an update or delete batch, the records
 *   are read by id in one query (`filter: {record_id: {$in: [...]}}`) and compared with `expected`;
 *   a record changed since Lockstep read it (or gone) answers `version_conflict` with its current
 *   values and is not written. That read also gives the current values an update merges with (the
 *   other emails of a person, the other part of a name). One query per batch + one request per
 *   record written: ~1.01 requests per record for a batch of 100.
 * - lists: a list is a table too (remote id `list:{api_slug}`, named after the list): its entries
 *   are read, compared and written the same way on `/v2/lists/{l}/entries` (`entry_id $in` for
 *   reads by id; `POST` to add, `PATCH`/`PUT` with `entry_values`, `DELETE`). The entry's parent
 *   record is the field `parent_record`, a linked record of the list's parent object (required to
 *   add an entry; Attio cannot move an entry to another record, so changing it is refused).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type CanonicalValue,
  hashRecord,
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
  ATTIO_RATE_LIMIT,
  type AttioClient,
  type AttioClientOptions,
  attioUserMessage,
  createAttioClient,
} from './attio-api';
import {
  type AttioAttribute,
  type AttioField,
  type AttioValue,
  attioFields,
  currencyMismatch,
  fromCanonical,
  isReadOnly,
  toCanonical,
} from './attio-values';

export const ATTIO_BATCH_SIZE = 100;
/** Attio's query returns at most 500 records per request (its default limit). */
export const ATTIO_MAX_PAGE_SIZE = 500;
/** Query requests one read() makes at most while a pass finds few changes (then it returns). */
export const ATTIO_MAX_QUERIES_PER_READ = 20;
const SCHEMA_MAX_AGE_MS = 60_000;

export type AttioObject = {
  id: { workspace_id?: string; object_id: string };
  api_slug: string | null;
  singular_noun: string | null;
  plural_noun: string | null;
};

export type AttioRecord = {
  id: { workspace_id?: string; object_id?: string; record_id: string };
  created_at?: string;
  web_url?: string;
  values?: Record<string, AttioValue[]> | null;
};

/** A list entry as Attio answers it. */
export type AttioEntry = {
  id: { workspace_id?: string; list_id?: string; entry_id: string };
  parent_record_id: string;
  parent_object: string;
  created_at?: string;
  entry_values?: Record<string, AttioValue[]> | null;
};

/** A list as `GET /v2/lists` answers it (`parent_object` the object slugs its entries belong to). */
export type AttioList = {
  id: { workspace_id?: string; list_id: string };
  api_slug: string;
  name?: string | null;
  parent_object: string[];
};

/**
 * Lists are tables too: a list's table remote id is `list:{api_slug}` (objects are keyed by their
 * api_slug alone, which has no colon). Its fields are the list's attributes plus PARENT_FIELD.
 */
export const ATTIO_LIST_PREFIX = 'list:';
/** The entry's parent record, a linked record of the list's parent object's table. */
export const ATTIO_PARENT_FIELD = 'parent_record';

/** The attribute that stands for an entry's parent record (a record reference to the parent object). */
export function parentAttribute(parentObject: string, title = 'Parent record'): AttioAttribute {
  return {
    id: { attribute_id: ATTIO_PARENT_FIELD },
    title,
    api_slug: ATTIO_PARENT_FIELD,
    type: 'record-reference',
    is_writable: true,
    is_multiselect: false,
    is_required: true,
    is_unique: false,
    is_archived: false,
    is_system_attribute: false,
    config: { record_reference: { allowed_object_ids: [parentObject] } },
  } as AttioAttribute;
}

/** An entry in the shape of a record: its id, and its values with the parent as a reference value. */
export function entryAsRecord(e: AttioEntry): AttioRecord {
  return {
    id: { record_id: e.id.entry_id },
    ...(e.created_at ? { created_at: e.created_at } : {}),
    values: {
      ...(e.entry_values ?? {}),
      [ATTIO_PARENT_FIELD]: [
        {
          target_object: e.parent_object,
          target_record_id: e.parent_record_id,
          active_from: e.created_at ?? null,
          active_until: null,
          attribute_type: 'record-reference',
        } as AttioValue,
      ],
    },
  };
}

export const ATTIO_CAPABILITIES: Capabilities = {
  batchSize: ATTIO_BATCH_SIZE,
  incrementalRead: true,
  // Deletes are reported as events: ids known to the cursor and no longer in Attio.
  deleteDetection: 'events',
  // Record events wake a run (webhooks.ts; the server makes the webhook and takes its deliveries).
  webhooks: true,
  rateLimit: ATTIO_RATE_LIMIT,
  // Every attribute of the object is a field of every record read (empty ones as null).
  recordsCarryEveryField: true,
};

// ---------------------------------------------------------------------------------------------
// Cursor

type Known = Map<string, { h: string; p: 0 | 1 }>;
type ReadCursor = {
  v: 1;
  /** Parity of the pass under way: entries seen in it carry it. */
  p: 0 | 1;
  /** Offset of the next query in this pass. */
  o: number;
  /** The first pass (a full scan: every record is returned). */
  s?: true;
  /** Packed id -> hash + parity. */
  k: string;
};

/** id -> (hash, parity), packed small enough for a cursor: `id hash parity` lines, deflated. */
export function packKnown(known: Known): string {
  if (known.size === 0) return '';
  const lines = [...known].map(([id, e]) => `${id} ${e.h} ${e.p}`).join('\n');
  return deflateRawSync(Buffer.from(lines)).toString('base64url');
}
export function unpackKnown(packed: string | undefined): Known {
  const out: Known = new Map();
  if (!packed) return out;
  for (const line of inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8').split('\n')) {
    const [id, h, p] = line.split(' ');
    if (id && h) out.set(id, { h, p: p === '1' ? 1 : 0 });
  }
  return out;
}

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable cursor means a full rescan. */
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.p === 0 || c.p === 1) && typeof c.o === 'number' && typeof c.k === 'string') return c;
  } catch {
    // fall through
  }
  return null;
}

/** A record's fingerprint: its canonical fields' hash (what a change of any value changes). */
export function fingerprint(record: RecordData): string {
  return hashRecord(record.fields).slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Connector

export type AttioConnectorOptions = Omit<AttioClientOptions, 'token'> & {
  token: AttioClientOptions['token'];
  /** Defaults to https://api.attio.com (the simulator in tests). */
  baseUrl?: string;
  /** Query page size (Attio's 500; lower in tests). */
  queryPageSize?: number;
  now?: () => number;
};

export type AttioTableSchema = { attributes: AttioAttribute[]; fields: AttioField[] };

export type AttioConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  /** An object's attributes and synced fields (cached for a minute). */
  describe(object: string, refresh?: boolean): Promise<AttioTableSchema>;
  client: AttioClient;
};

type Update = Extract<WriteRequest, { kind: 'update' }>;
type Create = Extract<WriteRequest, { kind: 'create' }>;
type Delete = Extract<WriteRequest, { kind: 'delete' }>;

/** Attributes a create may assert on, best first: people by email, companies by domain. */
const PREFERRED_MATCH = ['email_addresses', 'domains'];

export function createAttioConnector(options: AttioConnectorOptions): AttioConnector {
  const client = createAttioClient(options);
  const now = options.now ?? Date.now;
  const queryPage = Math.max(1, Math.min(options.queryPageSize ?? ATTIO_MAX_PAGE_SIZE, ATTIO_MAX_PAGE_SIZE));
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; schema: AttioTableSchema }>();
  /** Option and status titles by id, per object and attribute (when a value names only the id). */
  const titleCache = new Map<string, Map<string, string>>();

  /**
   * Where a table lives in the API: an object (`/v2/objects/{slug}/records`) or a list
   * (`/v2/lists/{slug}/entries`, table id `list:{slug}`).
   */
  const targetOf = (tableRemoteId: string) => {
    const t = tableRemoteId.trim();
    const list = t.startsWith(ATTIO_LIST_PREFIX);
    const slug = list ? t.slice(ATTIO_LIST_PREFIX.length) : t;
    if (!slug) throw new ConnectorError('not_found', 'no Attio object', attioUserMessage('not_found'));
    const base = `/v2/${list ? 'lists' : 'objects'}/${encodeURIComponent(slug)}`;
    return { list, base, rows: `${base}/${list ? 'entries' : 'records'}` };
  };
  /** Lists' parent objects, by table id (for a create's parent_object). */
  const listParents = new Map<string, string>();

  async function describe(object: string, refresh = false): Promise<AttioTableSchema> {
    const known = schemas.get(object);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.schema;
    const target = targetOf(object);
    const { body } = await client.request<{ data: AttioAttribute[] }>({
      method: 'GET',
      path: `${target.base}/attributes`,
    });
    const attributes = body.data;
    if (target.list) {
      const { body: list } = await client.request<{ data: AttioList }>({ method: 'GET', path: target.base });
      const parent = list.data.parent_object[0];
      if (!parent)
        throw new ConnectorError(
          'not_found',
          `Attio list ${object} has no parent object`,
          attioUserMessage('not_found'),
        );
      listParents.set(object, parent);
      attributes.push(parentAttribute(parent));
    }
    const schema = { attributes, fields: attioFields(attributes) };
    schemas.set(object, { at: now(), schema });
    return schema;
  }

  function titlesFor(object: string, a: AttioAttribute): (id: string) => string | undefined {
    return (id) => titleCache.get(`${object}/${a.api_slug}`)?.get(id);
  }

  /** Loads option/status titles for attributes whose values came back as bare ids. */
  async function loadTitles(object: string, records: AttioRecord[], schema: AttioTableSchema) {
    for (const a of schema.attributes) {
      if (a.type !== 'select' && a.type !== 'status') continue;
      const key = `${object}/${a.api_slug}`;
      if (titleCache.has(key)) continue;
      const bare = records.some((r) =>
        (r.values?.[a.api_slug] ?? []).some(
          (v) => typeof (a.type === 'select' ? v.option : v.status) === 'string',
        ),
      );
      if (!bare) continue;
      const { body } = await client.request<{
        data: { id: { option_id?: string; status_id?: string }; title: string }[];
      }>({
        method: 'GET',
        path: `${targetOf(object).base}/attributes/${encodeURIComponent(a.api_slug)}/${a.type === 'select' ? 'options' : 'statuses'}`,
        query: { show_archived: true },
      });
      titleCache.set(
        key,
        new Map(body.data.map((o) => [o.id.option_id ?? o.id.status_id ?? '', o.title] as [string, string])),
      );
    }
  }

  function toRecord(object: string, schema: AttioTableSchema, r: AttioRecord): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const f of schema.fields)
      fields[f.remoteId] = toCanonical(f, r.values?.[f.attribute.api_slug], titlesFor(object, f.attribute));
    return { id: r.id.record_id, fields };
  }

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), attioUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }

  /** Records, or a list's entries in the shape of records. */
  const asRecords = (object: string, data: (AttioRecord | AttioEntry)[]): AttioRecord[] =>
    targetOf(object).list ? (data as AttioEntry[]).map(entryAsRecord) : (data as AttioRecord[]);

  async function query(object: string, body: Record<string, unknown>): Promise<AttioRecord[]> {
    const res = await client.request<{ data: (AttioRecord | AttioEntry)[] }>({
      method: 'POST',
      path: `${targetOf(object).rows}/query`,
      body,
      // A query changes nothing: safe to send again.
      idempotent: true,
    });
    return asRecords(object, res.body.data);
  }

  /**
   * The records with these ids as Attio has them now (ids not found left out): one query per 500
   * ids (`record_id $in`); if Attio refuses that filter, one GET per id.
   */
  async function fetchByIds(object: string, ids: string[]): Promise<AttioRecord[]> {
    const unique = [...new Set(ids)];
    const out: AttioRecord[] = [];
    for (let i = 0; i < unique.length; i += ATTIO_MAX_PAGE_SIZE) {
      const chunk = unique.slice(i, i + ATTIO_MAX_PAGE_SIZE);
      try {
        out.push(
          ...(await query(object, {
            filter: { [targetOf(object).list ? 'entry_id' : 'record_id']: { $in: chunk } },
            limit: chunk.length,
            offset: 0,
          })),
        );
      } catch (error) {
        if (!(error instanceof ConnectorError && error.code === 'validation')) throw error;
        for (const id of chunk) {
          try {
            const res = await client.request<{ data: AttioRecord | AttioEntry }>({
              method: 'GET',
              path: `${targetOf(object).rows}/${encodeURIComponent(id)}`,
            });
            out.push(...asRecords(object, [res.body.data]));
          } catch (e) {
            if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
          }
        }
      }
    }
    const wanted = new Set(unique);
    return out.filter((r) => wanted.has(r.id.record_id));
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const schema = await describe(tableId);
    const want = Math.max(1, opts.pageSize);
    const given = decode(cursor);
    const c: ReadCursor = given ?? { v: 1, p: 1, o: 0, s: true, k: '' };
    const known = unpackKnown(c.k);
    const records: RecordData[] = [];
    let offset = c.o;
    let ended = false;
    let queries = 0;
    while (records.length < want && queries < ATTIO_MAX_QUERIES_PER_READ) {
      const limit = Math.min(queryPage, c.s ? want - records.length : queryPage);
      const page = await query(tableId, {
        sorts: [{ attribute: 'created_at', direction: 'asc' }],
        limit,
        offset,
      });
      queries++;
      await loadTitles(tableId, page, schema);
      for (const r of page) {
        const record = toRecord(tableId, schema, r);
        const h = fingerprint(record);
        const before = known.get(record.id);
        if (c.s || !before || before.h !== h) records.push(record);
        known.set(record.id, { h, p: c.p });
      }
      offset += page.length;
      if (page.length < limit) {
        ended = true;
        break;
      }
    }
    const deletedIds: string[] = [];
    if (ended) {
      // Ids the pass did not see: still in Attio (skipped by an offset shift: returned now) or gone.
      const missing = [...known].filter(([, e]) => e.p !== c.p).map(([id]) => id);
      if (missing.length > 0) {
        const found = await fetchByIds(tableId, missing);
        await loadTitles(tableId, found, schema);
        const present = new Set<string>();
        for (const r of found) {
          const record = toRecord(tableId, schema, r);
          present.add(record.id);
          const before = known.get(record.id);
          if (!before || before.h !== fingerprint(record)) records.push(record);
          known.set(record.id, { h: fingerprint(record), p: c.p });
        }
        for (const id of missing) {
          if (present.has(id)) continue;
          known.delete(id);
          deletedIds.push(id);
        }
      }
    }
    const next: ReadCursor = ended
      ? { v: 1, p: c.p === 1 ? 0 : 1, o: 0, k: packKnown(known) }
      : { ...c, o: offset, k: packKnown(known) };
    return {
      records,
      deletedIds,
      nextCursor: encode(next),
      hasMore: !ended,
      // Absence is evidence only when this one page holds the whole object (a first scan in one page).
      scanComplete: given === null && ended && c.o === 0 && queries === 1,
    };
  }

  /** The attribute values to write for the fields given, merged with the record's current values. */
  function valuesFor(
    schema: AttioTableSchema,
    fields: Record<string, CanonicalValue>,
    current: AttioRecord | undefined,
    forCreate: boolean,
  ): { values: Record<string, unknown[]>; multiselect: boolean; invalid?: string } {
    const grouped = new Map<
      string,
      {
        a: AttioAttribute;
        whole?: CanonicalValue;
        first_name?: CanonicalValue;
        last_name?: CanonicalValue;
        has: boolean;
      }
    >();
    for (const [name, raw] of Object.entries(fields)) {
      const f = schema.fields.find((x) => x.remoteId === name);
      if (!f || isReadOnly(f.attribute)) continue;
      const norm = normalizeValue(f.fieldType, raw ?? null);
      if (!norm.ok) return { values: {}, multiselect: false, invalid: `${f.name}: ${norm.problem.message}` };
      const mismatch = currencyMismatch(f.attribute, norm.value);
      if (mismatch) return { values: {}, multiselect: false, invalid: mismatch };
      const g = grouped.get(f.attribute.api_slug) ?? { a: f.attribute, has: true };
      if (f.part) g[f.part] = norm.value;
      else g.whole = norm.value;
      grouped.set(f.attribute.api_slug, g);
    }
    const values: Record<string, unknown[]> = {};
    let multiselect = false;
    for (const [slug, g] of grouped) {
      const list = fromCanonical(g.a, g, current?.values?.[slug]);
      // A create leaves empty attributes out (a required one then fails with Attio's own message).
      if (forCreate && list.length === 0) continue;
      values[slug] = list;
      if (g.a.is_multiselect) multiselect = true;
    }
    return { values, multiselect };
  }

  /** The unique attribute a create asserts on (its values filled), if any. */
  function matchingAttribute(
    schema: AttioTableSchema,
    values: Record<string, unknown[]>,
  ): string | undefined {
    const unique = schema.attributes.filter(
      (a) => a.is_unique && !isReadOnly(a) && (values[a.api_slug]?.length ?? 0) > 0,
    );
    const preferred = PREFERRED_MATCH.map((s) => unique.find((a) => a.api_slug === s)).find(Boolean);
    return (preferred ?? unique[0])?.api_slug;
  }

  function conflict(tableId: string, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Attio ${tableId} ${id} changed since it was read`,
        userFacingMessage: 'The Attio record changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  /** A changed expected field, or null when the record still holds what Lockstep read. */
  function changed(
    schema: AttioTableSchema,
    record: RecordData,
    expected: Record<string, CanonicalValue> | undefined,
  ): boolean {
    for (const [name, want] of Object.entries(expected ?? {})) {
      const f = schema.fields.find((x) => x.remoteId === name);
      if (!f) continue;
      const norm = normalizeValue(f.fieldType, want ?? null);
      if (!norm.ok || !valuesEqual(norm.value, record.fields[name] ?? null)) return true;
    }
    return false;
  }

  /** Runs one item; an error of that item alone (a bad value, a missing record) is its result. */
  async function item(run: () => Promise<WriteResult>): Promise<WriteResult> {
    try {
      return await run();
    } catch (err) {
      // Rate limits past the retries, outages and refused credentials concern the whole run.
      if (err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found'))
        return failure(err);
      throw err;
    }
  }

  /** A list entry: POST /v2/lists/{list}/entries with its parent record and entry values. */
  async function createEntry(tableId: string, schema: AttioTableSchema, r: Create): Promise<WriteResult> {
    const { values, invalid } = valuesFor(schema, r.fields, undefined, true);
    if (invalid)
      return failure(new ConnectorError('validation', invalid, attioUserMessage('validation', invalid)));
    const { [ATTIO_PARENT_FIELD]: parent, ...entryValues } = values;
    const parentId = (parent?.[0] as { target_record_id?: string } | undefined)?.target_record_id;
    if (!parentId) {
      const message = 'a list entry needs its parent record';
      return failure(new ConnectorError('validation', message, attioUserMessage('validation', message)));
    }
    // Not idempotent: sent twice it would add two entries (retried by the client only after a 429).
    const res = await client.request<{ data: AttioEntry }>({
      method: 'POST',
      path: targetOf(tableId).rows,
      body: {
        data: {
          parent_record_id: parentId,
          parent_object: listParents.get(tableId),
          entry_values: entryValues,
        },
      },
    });
    const record = entryAsRecord(res.body.data);
    idempotent.set(r.idempotencyKey, record.id.record_id);
    return { ok: true, remoteId: record.id.record_id, postImage: toRecord(tableId, schema, record) };
  }

  async function create(tableId: string, schema: AttioTableSchema, r: Create): Promise<WriteResult> {
    if (targetOf(tableId).list) return createEntry(tableId, schema, r);
    const { values, invalid } = valuesFor(schema, r.fields, undefined, true);
    if (invalid)
      return failure(new ConnectorError('validation', invalid, attioUserMessage('validation', invalid)));
    const matching = matchingAttribute(schema, values);
    const rows = targetOf(tableId).rows;
    const res = matching
      ? // Assert: sent twice (a lost answer), it updates the record it made the first time.
        await client.request<{ data: AttioRecord }>({
          method: 'PUT',
          path: rows,
          query: { matching_attribute: matching },
          body: { data: { values } },
          idempotent: true,
        })
      : // Not idempotent: sent twice it would create twice (retried by the client only after a 429).
        await client.request<{ data: AttioRecord }>({
          method: 'POST',
          path: rows,
          body: { data: { values } },
        });
    const id = res.body.data.id.record_id;
    idempotent.set(r.idempotencyKey, id);
    return { ok: true, remoteId: id, postImage: toRecord(tableId, schema, res.body.data) };
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const schema = await describe(tableId);
    const target = targetOf(tableId);
    const results: WriteResult[] = new Array(requests.length);

    // Creates retried with a known idempotency key answer the record made the first time.
    const retried = requests
      .map((r, index) => ({ r, index }))
      .filter(({ r }) => r.kind === 'create' && idempotent.has(r.idempotencyKey));
    // Updates, and deletes with expected values, are read first (one query for the batch).
    const toCheck = requests.filter(
      (r): r is Update | Delete =>
        r.kind === 'update' ||
        (r.kind === 'delete' && r.expected !== undefined && Object.keys(r.expected).length > 0),
    );
    const ids = [
      ...toCheck.map((r) => r.remoteId),
      ...retried.map(({ r }) => idempotent.get(r.idempotencyKey) as string),
    ];
    const current = new Map<string, AttioRecord>();
    if (ids.length > 0) {
      const found = await fetchByIds(tableId, ids);
      await loadTitles(tableId, found, schema);
      for (const r of found) current.set(r.id.record_id, r);
    }

    for (const [index, r] of requests.entries()) {
      if (r.kind === 'create') {
        const known = idempotent.get(r.idempotencyKey);
        if (known !== undefined) {
          const now_ = current.get(known);
          results[index] = now_
            ? { ok: true, remoteId: known, postImage: toRecord(tableId, schema, now_) }
            : failure(
                new ConnectorError(
                  'not_found',
                  `Attio ${tableId} ${known} not found`,
                  attioUserMessage('not_found'),
                ),
              );
          continue;
        }
        results[index] = await item(() => create(tableId, schema, r));
      } else if (r.kind === 'update') {
        const before = current.get(r.remoteId);
        if (!before) {
          results[index] = r.expected
            ? conflict(tableId, r.remoteId, null)
            : failure(
                new ConnectorError(
                  'not_found',
                  `Attio ${tableId} ${r.remoteId} not found`,
                  attioUserMessage('not_found'),
                ),
              );
          continue;
        }
        const live = toRecord(tableId, schema, before);
        if (changed(schema, live, r.expected)) {
          results[index] = conflict(tableId, r.remoteId, live);
          continue;
        }
        results[index] = await item(async () => {
          const { values, multiselect, invalid } = valuesFor(schema, r.fields, before, false);
          if (invalid)
            throw new ConnectorError('validation', invalid, attioUserMessage('validation', invalid));
          if (target.list && ATTIO_PARENT_FIELD in values) {
            // Attio cannot move an entry to another record: the same parent is no change.
            const to = (values[ATTIO_PARENT_FIELD]?.[0] as { target_record_id?: string } | undefined)
              ?.target_record_id;
            const from = live.fields[ATTIO_PARENT_FIELD];
            if (to !== (Array.isArray(from) ? from[0] : from)) {
              const message = 'an Attio list entry cannot move to another record';
              throw new ConnectorError('validation', message, attioUserMessage('validation', message));
            }
            delete values[ATTIO_PARENT_FIELD];
          }
          if (Object.keys(values).length === 0) return { ok: true, remoteId: r.remoteId, postImage: live };
          const res = await client.request<{ data: AttioRecord | AttioEntry }>({
            // PUT replaces multiselect lists; PATCH would append to them.
            method: multiselect ? 'PUT' : 'PATCH',
            path: `${target.rows}/${encodeURIComponent(r.remoteId)}`,
            body: { data: target.list ? { entry_values: values } : { values } },
            // The same values set twice: safe to send again.
            idempotent: true,
          });
          const [after] = asRecords(tableId, [res.body.data]);
          return {
            ok: true,
            remoteId: r.remoteId,
            postImage: toRecord(tableId, schema, after as AttioRecord),
          };
        });
      } else {
        if (r.expected && Object.keys(r.expected).length > 0) {
          const before = current.get(r.remoteId);
          if (!before) {
            results[index] = { ok: true, remoteId: r.remoteId, postImage: null };
            continue;
          }
          const live = toRecord(tableId, schema, before);
          if (changed(schema, live, r.expected)) {
            results[index] = conflict(tableId, r.remoteId, live);
            continue;
          }
        }
        results[index] = await item(async () => {
          try {
            await client.request({
              method: 'DELETE',
              path: `${target.rows}/${encodeURIComponent(r.remoteId)}`,
            });
          } catch (e) {
            // Already gone: the delete has happened (a replay, or deleted in Attio meanwhile).
            if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
          }
          return { ok: true, remoteId: r.remoteId, postImage: null };
        });
      }
    }
    return results;
  }

  return {
    capabilities: ATTIO_CAPABILITIES,
    client,
    describe,
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const schema = await describe(tableId);
      const found = await fetchByIds(tableId, ids);
      await loadTitles(tableId, found, schema);
      return found.map((r) => toRecord(tableId, schema, r));
    },
  };
}
