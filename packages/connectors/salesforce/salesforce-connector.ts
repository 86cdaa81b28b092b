/**
 * Salesforce as a sync side (a TableConnector), one table per sObject (Account, Contact, Lead,
 * Opportunity and custom objects `__c`; the table's remote id is the object's API name), on the REST
 * API and Bulk API 2.0 through the SDK's HttpClient (salesforce-api.ts):
 * - read: a full scan by SOQL ordered by Id, paged by keyset (`WHERE Id > last ORDER BY Id LIMIT n`,
 *   each query following `nextRecordsUrl` in batches of 2,000), so a cursor never holds a query
 *   locator that expires. An object at least `bulkQueryThreshold` records large (one `SELECT COUNT()`
 *   tells) is scanned by one Bulk API 2.0 query job instead, its CSV results read in chunks of
 *   `bulkChunkRecords` (`maxRecords`, `Sforce-Locator`) and handed out a page at a time: a
 *   100,000-record first sync takes a handful of calls. Afterwards incremental reads select
 *   `SystemModstamp >= previous read's start - overlap` ordered by (SystemModstamp, Id), paged by
 *   keyset on that pair (an edit during the read moves a record later: read again, never skipped).
 * - deletes: `GET /sobjects/{o}/deleted/?start=&end=` (the recycle bin window) from where the previous
 *   call's `latestDateCovered` left off (Salesforce covers the window up to it; seconds are ignored,
 *   so a delete shows once its minute has passed); ids still there (undeleted) are dropped.
 *   A cursor older than the window answers INVALID_REPLICATION_DATE: cursor_invalid, a full rescan.
 * - write: sObject Collections (`/composite/sobjects`, 200 a call, allOrNone false) with per-item
 *   results; at least `bulkWriteThreshold` requests of a kind go as one Bulk API 2.0 ingest job (CSV
 *   upload, poll, successful/failed results mapped back to each request by its Id or its values).
 *   Every written record is read again for its post-image (triggers and workflow may change what was
 *   sent: Lockstep keeps what Salesforce holds). Composite has no conditional update: updates and
 *   deletes with `expected` are compared with a read right before the write (version_conflict with
 *   the current values). Creates are idempotent within the process (a map of idempotency keys).
 *   A create refused by a duplicate rule (a Contact or Lead: its match, or the record with its Email)
 *   or a unique field (DUPLICATE_VALUE names the record) answers `existingId`.
 * - full name: an object with writable FirstName and LastName (contacts, leads) has a "Full name"
 *   field made of both (salesforce-values.ts), read from them and written as them.
 */

import { type CanonicalValue, normalizeValue, type RecordData, valuesEqual } from '@lockstep/engine';
import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import { joinName, splitFullName } from '../sdk/full-name';
import {
  createSalesforceClient,
  csvObjects,
  SALESFORCE_RATE_LIMIT,
  type SalesforceClient,
  type SalesforceClientOptions,
  type SalesforceError,
  salesforceItemError,
  salesforceUserMessage,
  toCsv,
} from './salesforce-api';
import {
  canonicalType,
  FULL_NAME,
  fromCanonical,
  offersFullName,
  type SalesforceDescribe,
  type SalesforceField,
  type SalesforceFieldMeta,
  salesforceFields,
  toCanonical,
  toCsvCell,
} from './salesforce-values';

export const SALESFORCE_STANDARD_OBJECTS = ['Account', 'Contact', 'Lead', 'Opportunity'] as const;
/** sObject Collections take at most 200 records a call. */
export const SALESFORCE_COLLECTION_SIZE = 200;
/** A query returns at most 2,000 records a batch; pages are that large. */
export const SALESFORCE_QUERY_BATCH = 2_000;
/** How far each incremental read reaches back before the previous read's start. */
export const SALESFORCE_READ_OVERLAP_MS = 60_000;
export const SALESFORCE_BULK_WRITE_THRESHOLD = 2_000;
/** Records per Bulk API 2.0 ingest job the runtime sends at most (far below the 150 MB CSV cap). */
export const SALESFORCE_BULK_WRITE_SIZE = 10_000;
export const SALESFORCE_BULK_QUERY_THRESHOLD = 10_000;
export const SALESFORCE_BULK_CHUNK = 50_000;
/** Ids per sObject Collections retrieve. */
const IDS_PER_RETRIEVE = 2_000;
const SCHEMA_MAX_AGE_MS = 60_000;

export const SALESFORCE_CAPABILITIES: Capabilities = {
  // Runs write up to this many at once: 200 a collection call, a Bulk API 2.0 job from 2,000.
  batchSize: SALESFORCE_QUERY_BATCH,
  // A batch this large is one Bulk API 2.0 ingest job (five or six calls) instead of 50 collection calls.
  bulkWriteSize: SALESFORCE_BULK_WRITE_SIZE,
  incrementalRead: true,
  deleteDetection: 'events',
  webhooks: false,
  rateLimit: SALESFORCE_RATE_LIMIT,
  // A SOQL query returns every field it selects, empty ones as null.
  recordsCarryEveryField: true,
};

export type SalesforceConnectorOptions = SalesforceClientOptions & {
  overlapMs?: number;
  /** Requests of one kind from which a write goes through Bulk API 2.0 (2,000). */
  bulkWriteThreshold?: number;
  /** Records from which a first full scan is a Bulk API 2.0 query (10,000). */
  bulkQueryThreshold?: number;
  /** Records per Bulk API 2.0 results request (50,000). */
  bulkChunkRecords?: number;
  /** Between polls of a bulk job (2 s), and how long one may take (15 min). */
  bulkPollMs?: number;
  bulkTimeoutMs?: number;
  now?: () => number;
};

export type SalesforceConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  describe(object: string, refresh?: boolean): Promise<SalesforceDescribe>;
  fieldsOf(object: string): Promise<SalesforceField[]>;
  client: SalesforceClient;
};

type ScanCursor = { v: 1; m: 'scan'; after?: string; since: number; del: number };
type BulkCursor = {
  v: 1;
  m: 'bulk';
  job: string;
  locator: string;
  offset: number;
  since: number;
  del: number;
};
type ChangesCursor = {
  v: 1;
  m: 'changes';
  /** This read's lower bound on SystemModstamp (ms). */
  since: number;
  /** Lower bound of the deleted window (ms): the last call's latestDateCovered. */
  del: number;
  /** A read under way: the next read's lower bound (this read's start minus the overlap). */
  next?: number;
  /** Keyset: the last (SystemModstamp, Id) read. */
  stamp?: string;
  id?: string;
};
type ReadCursor = ScanCursor | BulkCursor | ChangesCursor;

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && ['scan', 'bulk', 'changes'].includes(c.m) && typeof c.since === 'number') return c;
  } catch {
    // fall through
  }
  return null;
}

/** A SOQL string literal. */
export function soqlString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A SOQL dateTime literal (unquoted, UTC); milliseconds only when there are any. */
export function soqlDateTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** An sObject API name as Salesforce spells it: letters, digits, underscores. */
function objectName(tableRemoteId: string): string {
  const name = tableRemoteId.trim();
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name))
    throw new ConnectorError(
      'not_found',
      `bad Salesforce object ${tableRemoteId}`,
      salesforceUserMessage('not_found'),
    );
  return name;
}

type SObject = { attributes?: { type?: string; url?: string }; Id: string; [field: string]: unknown };
type QueryResult = { totalSize: number; done: boolean; records: SObject[]; nextRecordsUrl?: string };
type SaveResult = { id?: string | null; success: boolean; errors?: SalesforceError[] };
type Outcome = { ok: true; id: string } | { ok: false; error: ConnectorError; existingId?: string };

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createSalesforceConnector(options: SalesforceConnectorOptions): SalesforceConnector {
  const client = createSalesforceClient(options);
  const now = options.now ?? Date.now;
  const overlap = options.overlapMs ?? SALESFORCE_READ_OVERLAP_MS;
  const bulkWrite = options.bulkWriteThreshold ?? SALESFORCE_BULK_WRITE_THRESHOLD;
  const bulkQuery = options.bulkQueryThreshold ?? SALESFORCE_BULK_QUERY_THRESHOLD;
  const bulkChunk = options.bulkChunkRecords ?? SALESFORCE_BULK_CHUNK;
  const pollMs = options.bulkPollMs ?? 2_000;
  const bulkTimeout = options.bulkTimeoutMs ?? 15 * 60_000;
  const sleep = options.sleep ?? defaultSleep;
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; describe: SalesforceDescribe }>();
  /** Bulk query results read but not yet handed out (one chunk per table). */
  const bulkChunks = new Map<string, { key: string; rows: Record<string, string>[]; next: string | null }>();

  async function describe(object: string, refresh = false): Promise<SalesforceDescribe> {
    const name = objectName(object);
    const known = schemas.get(name);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.describe;
    const { body } = await client.request<SalesforceDescribe>({
      method: 'GET',
      path: `/sobjects/${name}/describe`,
    });
    schemas.set(name, { at: now(), describe: body });
    return body;
  }

  /** The synced fields of an object and the names a query selects. */
  async function readFields(object: string): Promise<{ metas: SalesforceFieldMeta[]; names: string[] }> {
    const d = await describe(object);
    const synced = new Set(salesforceFields(d).map((f) => f.remoteId));
    const metas = d.fields.filter((f) => synced.has(f.name));
    const names = ['Id', ...metas.map((f) => f.name).filter((n) => n !== 'Id')];
    if (!names.includes('SystemModstamp')) names.push('SystemModstamp');
    return { metas, names };
  }

  function toRecord(metas: SalesforceFieldMeta[], o: Record<string, unknown>): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const f of metas) fields[f.name] = toCanonical(f, o[f.name]);
    // The full name (salesforce-values.ts) from the two parts read.
    if (offersFullName(metas)) fields[FULL_NAME] = joinName(o.FirstName, o.LastName);
    return { id: String(o.Id), fields };
  }

  function serverTime(headers: Headers): number {
    const t = Date.parse(headers.get('date') ?? '');
    return Number.isNaN(t) ? now() : t;
  }

  /** Runs a SOQL query, following nextRecordsUrl until done or `limit` records are in. */
  async function query(soql: string, limit = Number.POSITIVE_INFINITY, all = false) {
    const records: SObject[] = [];
    let res = await client.request<QueryResult>({
      method: 'GET',
      path: all ? '/queryAll' : '/query',
      query: { q: soql },
    });
    const first = res;
    records.push(...res.body.records);
    while (!res.body.done && res.body.nextRecordsUrl && records.length < limit) {
      res = await client.request<QueryResult>({ method: 'GET', path: res.body.nextRecordsUrl });
      records.push(...res.body.records);
    }
    return { records, totalSize: first.body.totalSize, headers: first.headers };
  }

  /**
   * The records with these ids as they are now (ids not found are left out): sObject Collections
   * retrieve (`POST /composite/sobjects/{o}` with the ids in the body, 2,000 a call).
   */
  async function readByIds(object: string, ids: string[], names: string[]): Promise<SObject[]> {
    const out: SObject[] = [];
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += IDS_PER_RETRIEVE) {
      const chunk = unique.slice(i, i + IDS_PER_RETRIEVE);
      const { body } = await client.request<(SObject | null)[]>({
        method: 'POST',
        path: `/composite/sobjects/${object}`,
        body: { ids: chunk, fields: names },
        // A read: safe to send again.
        idempotent: true,
      });
      for (const o of body ?? []) if (o?.Id) out.push(o);
    }
    return out;
  }

  // ---- reads ----------------------------------------------------------------------------------

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const object = objectName(tableId);
    const { metas, names } = await readFields(object);
    const want = Math.max(1, opts.pageSize);
    let c = decode(cursor);

    if (!c) {
      // A new full scan: its size decides SOQL pages or one Bulk API 2.0 query job.
      const count = await query(`SELECT COUNT() FROM ${object}`);
      const start = serverTime(count.headers) - overlap;
      if (count.totalSize >= bulkQuery && count.totalSize > want) {
        const job = await startBulkQuery(`SELECT ${names.join(', ')} FROM ${object}`);
        c = { v: 1, m: 'bulk', job, locator: '', offset: 0, since: start, del: start };
      } else {
        c = { v: 1, m: 'scan', since: start, del: start };
        return scanPage(object, metas, names, c, want, true);
      }
    }
    if (c.m === 'scan') return scanPage(object, metas, names, c, want, false);
    if (c.m === 'bulk') return bulkPage(object, metas, c, want);
    return changesPage(object, metas, names, c, want);
  }

  async function scanPage(
    object: string,
    metas: SalesforceFieldMeta[],
    names: string[],
    c: ScanCursor,
    want: number,
    first: boolean,
  ): Promise<ReadPage> {
    // One more than the page asks for tells whether the table goes on.
    const { records } = await query(
      `SELECT ${names.join(', ')} FROM ${object}${c.after ? ` WHERE Id > ${soqlString(c.after)}` : ''} ORDER BY Id LIMIT ${want + 1}`,
      want + 1,
    );
    const page = records.slice(0, want);
    const hasMore = records.length > want;
    const next: ReadCursor = hasMore
      ? { ...c, after: String(page[page.length - 1]?.Id) }
      : { v: 1, m: 'changes', since: c.since, del: c.del };
    return {
      records: page.map((o) => toRecord(metas, o)),
      deletedIds: [],
      nextCursor: encode(next),
      hasMore,
      scanComplete: first && !hasMore,
    };
  }

  async function startBulkQuery(soql: string): Promise<string> {
    const { body } = await client.request<{ id: string }>({
      method: 'POST',
      path: '/jobs/query',
      body: { operation: 'query', query: soql },
    });
    return body.id;
  }

  /** Polls a bulk job until it is done; a failed or aborted job is an error for the run to retry. */
  async function awaitJob(kind: 'query' | 'ingest', job: string) {
    const started = now();
    for (;;) {
      const { body } = await client.request<{
        state: string;
        errorMessage?: string;
        numberRecordsProcessed?: number;
        numberRecordsFailed?: number;
      }>({ method: 'GET', path: `/jobs/${kind}/${job}` });
      if (body.state === 'JobComplete') return body;
      if (body.state === 'Failed' || body.state === 'Aborted') {
        if (kind === 'ingest') return body;
        throw new ConnectorError(
          'transient',
          `Salesforce bulk ${kind} job ${job} ${body.state}: ${body.errorMessage ?? ''}`,
          'A Salesforce bulk job did not finish; the sync will retry.',
        );
      }
      if (now() - started > bulkTimeout)
        throw new ConnectorError(
          'transient',
          `Salesforce bulk ${kind} job ${job} still ${body.state} after ${bulkTimeout} ms`,
          'Salesforce is taking long to process a bulk job; the sync will retry.',
        );
      await sleep(pollMs);
    }
  }

  async function bulkPage(
    object: string,
    metas: SalesforceFieldMeta[],
    c: BulkCursor,
    want: number,
  ): Promise<ReadPage> {
    const key = `${c.job}|${c.locator}`;
    let chunk = bulkChunks.get(object);
    if (chunk?.key !== key) {
      // A chunk not in memory (another process, a restart) is read again from its locator.
      if (c.locator === '') await awaitJob('query', c.job);
      const res = await client.request<string>({
        method: 'GET',
        path: `/jobs/query/${c.job}/results`,
        query: { maxRecords: bulkChunk, ...(c.locator ? { locator: c.locator } : {}) },
        headers: { accept: 'text/csv' },
      });
      const locator = res.headers.get('sforce-locator');
      chunk = {
        key,
        rows: csvObjects(typeof res.body === 'string' ? res.body : ''),
        next: locator && locator !== 'null' ? locator : null,
      };
      bulkChunks.set(object, chunk);
    }
    const rows = chunk.rows.slice(c.offset, c.offset + want);
    const offset = c.offset + rows.length;
    let next: ReadCursor;
    let hasMore = true;
    if (offset < chunk.rows.length) next = { ...c, offset };
    else if (chunk.next) next = { ...c, locator: chunk.next, offset: 0 };
    else {
      bulkChunks.delete(object);
      next = { v: 1, m: 'changes', since: c.since, del: c.del };
      hasMore = false;
    }
    return {
      records: rows.map((o) => toRecord(metas, o)),
      deletedIds: [],
      nextCursor: encode(next),
      hasMore,
      scanComplete: false,
    };
  }

  async function changesPage(
    object: string,
    metas: SalesforceFieldMeta[],
    names: string[],
    c: ChangesCursor,
    want: number,
  ): Promise<ReadPage> {
    let state: ChangesCursor = { ...c };
    let server = now();
    // Keyset on (SystemModstamp, Id): the first page of a read from its lower bound, later ones
    // after the last pair read.
    const where =
      state.stamp && state.id
        ? `(SystemModstamp > ${state.stamp} OR (SystemModstamp = ${state.stamp} AND Id > ${soqlString(state.id)}))`
        : `SystemModstamp >= ${soqlDateTime(state.since)}`;
    const res = await query(
      `SELECT ${names.join(', ')} FROM ${object} WHERE ${where} ORDER BY SystemModstamp, Id LIMIT ${want + 1}`,
      want + 1,
    );
    server = serverTime(res.headers);
    // The first request of a read fixes (by server time) where the next read begins.
    state.next ??= server - overlap;
    const page = res.records.slice(0, want);
    const records = page.map((o) => toRecord(metas, o));
    if (res.records.length > want) {
      const last = page[page.length - 1] as SObject;
      state = { ...state, stamp: soqlDateTime(Date.parse(String(last.SystemModstamp))), id: String(last.Id) };
      return { records, deletedIds: [], nextCursor: encode(state), hasMore: true, scanComplete: false };
    }
    // The changes are read: the deletes since the last deleted window, then the read is done.
    const { deletedIds, del } = await deletedSince(object, state.del, server);
    const read = new Set(records.map((r) => r.id));
    const next: ChangesCursor = { v: 1, m: 'changes', since: state.next, del };
    return {
      records,
      deletedIds: deletedIds.filter((id) => !read.has(id)),
      nextCursor: encode(next),
      hasMore: false,
      scanComplete: false,
    };
  }

  /** Ids deleted from `from` to the server's now (the recycle bin window), still gone now. */
  async function deletedSince(object: string, from: number, server: number) {
    // getDeleted ignores seconds: a window under a minute is left to the next read.
    if (server - from < 60_000) return { deletedIds: [], del: from };
    const { body } = await client.request<{
      deletedRecords?: { id: string; deletedDate?: string }[];
      latestDateCovered?: string;
      earliestDateAvailable?: string;
    }>({
      method: 'GET',
      path: `/sobjects/${object}/deleted/`,
      query: { start: new Date(from).toISOString(), end: new Date(server).toISOString() },
    });
    const ids = [...new Set((body.deletedRecords ?? []).map((d) => String(d.id)))];
    // A record undeleted since (restored from the recycle bin) is not reported deleted.
    const back =
      ids.length > 0 ? new Set((await readByIds(object, ids, ['Id'])).map((o) => String(o.Id))) : new Set();
    const covered = Date.parse(body.latestDateCovered ?? '');
    return {
      deletedIds: ids.filter((id) => !back.has(id)),
      // Salesforce guarantees the window up to latestDateCovered: the next call starts there.
      del: Number.isNaN(covered) ? from : covered,
    };
  }

  // ---- writes ---------------------------------------------------------------------------------

  function failure(
    err: unknown,
    extra: { existingId?: string; current?: RecordData | null } = {},
  ): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), salesforceUserMessage('transient'));
    return {
      ok: false,
      error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage },
      ...(extra.existingId ? { existingId: extra.existingId } : {}),
      ...('current' in extra ? { current: extra.current ?? null } : {}),
    };
  }

  function conflict(object: string, id: string, current: RecordData | null): WriteResult {
    return failure(
      new ConnectorError(
        'version_conflict',
        `Salesforce ${object} ${id} changed since it was read`,
        salesforceUserMessage('version_conflict'),
      ),
      { current },
    );
  }

  /** The JSON body of one record: writable fields only (createable on create, updateable on update). */
  function bodyFor(d: SalesforceDescribe, fields: Record<string, CanonicalValue>, creating: boolean) {
    const out: Record<string, unknown> = {};
    // The full name first, as its two parts (a blank part clears it; one word is a last name): a
    // first or last name written in the same request wins over its part.
    if (FULL_NAME in fields && offersFullName(d.fields)) {
      const { first, last } = splitFullName(fields[FULL_NAME] ?? null, 'last');
      out.FirstName = first === '' ? null : first;
      out.LastName = last === '' ? null : last;
    }
    for (const [name, value] of Object.entries(fields)) {
      const f = d.fields.find((x) => x.name === name);
      if (!f || !canonicalType(f) || f.calculated || f.autoNumber) continue;
      if (creating ? f.createable !== true : f.updateable !== true) continue;
      out[f.name] = fromCanonical(f, value);
    }
    return out;
  }

  /** The id of the record a duplicate rule or a unique field matched, from the error or by email. */
  async function duplicateOf(
    object: string,
    e: SalesforceError,
    email: unknown,
  ): Promise<string | undefined> {
    for (const m of e.duplicateResult?.matchResults ?? [])
      for (const r of m.matchRecords ?? []) if (r.record?.Id) return r.record.Id;
    // A unique field: `duplicate value found: X duplicates value on record with id: 001...`.
    const named = /record with id:\s*([a-zA-Z0-9]{15,18})/.exec(e.message ?? '')?.[1];
    if (named) return named;
    if ((object === 'Contact' || object === 'Lead') && typeof email === 'string' && email !== '') {
      const { records } = await query(
        `SELECT Id FROM ${object} WHERE Email = ${soqlString(email)} ORDER BY CreatedDate LIMIT 1`,
      );
      return records[0]?.Id;
    }
    return undefined;
  }

  /** sObject Collections results, item by item; a call refused whole for a value is tried per item. */
  async function collection(
    items: unknown[],
    send: (chunk: unknown[]) => Promise<SaveResult[]>,
  ): Promise<(SaveResult | ConnectorError)[]> {
    const out: (SaveResult | ConnectorError)[] = [];
    for (let i = 0; i < items.length; i += SALESFORCE_COLLECTION_SIZE) {
      const chunk = items.slice(i, i + SALESFORCE_COLLECTION_SIZE);
      try {
        out.push(...(await send(chunk)));
      } catch (err) {
        if (!(err instanceof ConnectorError && err.code === 'validation')) throw err;
        if (chunk.length === 1) {
          out.push(err);
          continue;
        }
        for (const item of chunk) {
          try {
            out.push(...(await send([item])));
          } catch (e) {
            if (!(e instanceof ConnectorError && e.code === 'validation')) throw e;
            out.push(e);
          }
        }
      }
    }
    return out;
  }

  async function createMany(object: string, d: SalesforceDescribe, fields: Record<string, CanonicalValue>[]) {
    const bodies = fields.map((f) => bodyFor(d, f, true));
    if (bodies.length >= bulkWrite) return bulkIngest(object, d, 'insert', bodies);
    const saved = await collection(bodies, async (chunk) => {
      // Not idempotent: sent twice it would create twice (only a 429, never processed, is retried).
      const res = await client.request<SaveResult[]>({
        method: 'POST',
        path: '/composite/sobjects',
        body: {
          allOrNone: false,
          records: chunk.map((b) => ({ attributes: { type: object }, ...(b as object) })),
        },
      });
      return res.body;
    });
    return Promise.all(
      saved.map(async (s, k): Promise<Outcome> => {
        if (s instanceof ConnectorError) return { ok: false, error: s };
        if (s.success && s.id) return { ok: true, id: s.id };
        const e = s.errors?.[0] ?? { statusCode: 'UNKNOWN_EXCEPTION', message: 'not created' };
        const code = e.statusCode ?? e.errorCode;
        const existingId =
          code === 'DUPLICATES_DETECTED' || code === 'DUPLICATE_VALUE'
            ? await duplicateOf(object, e, bodies[k]?.Email)
            : undefined;
        return { ok: false, error: salesforceItemError(e), ...(existingId ? { existingId } : {}) };
      }),
    );
  }

  async function updateMany(
    object: string,
    d: SalesforceDescribe,
    items: { id: string; fields: Record<string, CanonicalValue> }[],
  ): Promise<Outcome[]> {
    const bodies = items.map((x) => ({ Id: x.id, ...bodyFor(d, x.fields, false) }));
    if (bodies.length >= bulkWrite) return bulkIngest(object, d, 'update', bodies);
    const saved = await collection(bodies, async (chunk) => {
      const res = await client.request<SaveResult[]>({
        method: 'PATCH',
        path: '/composite/sobjects',
        body: {
          allOrNone: false,
          records: chunk.map((b) => {
            const { Id, ...rest } = b as { Id: string };
            return { attributes: { type: object }, id: Id, ...rest };
          }),
        },
        // The same values set again: safe to send twice.
        idempotent: true,
      });
      return res.body;
    });
    return saved.map((s, k): Outcome => {
      if (s instanceof ConnectorError) return { ok: false, error: s };
      if (s.success) return { ok: true, id: items[k]?.id as string };
      return { ok: false, error: salesforceItemError(s.errors?.[0] ?? { statusCode: 'UNKNOWN_EXCEPTION' }) };
    });
  }

  async function deleteMany(object: string, d: SalesforceDescribe, ids: string[]): Promise<Outcome[]> {
    if (ids.length >= bulkWrite)
      return bulkIngest(
        object,
        d,
        'delete',
        ids.map((Id) => ({ Id })),
      );
    const saved = await collection(ids, async (chunk) => {
      const res = await client.request<SaveResult[]>({
        method: 'DELETE',
        path: '/composite/sobjects',
        query: { ids: (chunk as string[]).join(','), allOrNone: 'false' },
      });
      return res.body;
    });
    return saved.map((s, k): Outcome => {
      const id = ids[k] as string;
      if (s instanceof ConnectorError) return { ok: false, error: s };
      const code = s.errors?.[0]?.statusCode ?? s.errors?.[0]?.errorCode;
      // Deleted already (a replay, or someone else): the delete holds.
      if (s.success || code === 'ENTITY_IS_DELETED') return { ok: true, id };
      return { ok: false, error: salesforceItemError(s.errors?.[0] ?? { statusCode: 'UNKNOWN_EXCEPTION' }) };
    });
  }

  /**
   * One Bulk API 2.0 ingest job: CSV upload, poll, results. Salesforce does not keep the upload's
   * order in its results: each result row goes to the request with its Id (update, delete) or with
   * the values it echoes (insert; identical rows are interchangeable), in order among equals.
   */
  async function bulkIngest(
    object: string,
    d: SalesforceDescribe,
    operation: 'insert' | 'update' | 'delete',
    bodies: Record<string, unknown>[],
  ): Promise<Outcome[]> {
    const columns = [...new Set(bodies.flatMap((b) => Object.keys(b)))];
    const meta = new Map(d.fields.map((f) => [f.name, f]));
    const cell = (name: string, b: Record<string, unknown>) => {
      if (!(name in b)) return '';
      if (name === 'Id') return String(b.Id);
      const f = meta.get(name) as SalesforceFieldMeta;
      const v = b[name];
      if (v === null || v === undefined) return '#N/A';
      return f ? toCsvCell(f, toCanonical(f, typeof v === 'number' ? String(v) : v)) : String(v);
    };
    const rows = bodies.map((b) => columns.map((name) => cell(name, b)));
    const { body: job } = await client.request<{ id: string }>({
      method: 'POST',
      path: '/jobs/ingest',
      body: { object, operation, contentType: 'CSV', lineEnding: 'LF', columnDelimiter: 'COMMA' },
    });
    await client.request({
      method: 'PUT',
      path: `/jobs/ingest/${job.id}/batches`,
      body: toCsv(columns, rows),
      headers: { 'content-type': 'text/csv' },
      // A second upload would add the rows again.
      idempotent: false,
    });
    await client.request({
      method: 'PATCH',
      path: `/jobs/ingest/${job.id}`,
      body: { state: 'UploadComplete' },
    });
    const info = await awaitJob('ingest', job.id);
    const csv = async (which: string) => {
      const res = await client.request<string>({
        method: 'GET',
        path: `/jobs/ingest/${job.id}/${which}`,
        headers: { accept: 'text/csv' },
      });
      return csvObjects(typeof res.body === 'string' ? res.body : '');
    };
    const successful = await csv('successfulResults');
    const failed = await csv('failedResults');
    const keyOf = (values: (string | undefined)[]) => JSON.stringify(values.map((v) => v ?? ''));
    const byKey = new Map<string, number[]>();
    rows.forEach((r, k) => {
      const key = operation === 'insert' ? keyOf(r) : keyOf([String(bodies[k]?.Id)]);
      byKey.set(key, [...(byKey.get(key) ?? []), k]);
    });
    const out: (Outcome | undefined)[] = bodies.map(() => undefined);
    const place = (row: Record<string, string>, outcome: (k: number) => Outcome) => {
      const key = operation === 'insert' ? keyOf(columns.map((c) => row[c])) : keyOf([row.Id || row.sf__Id]);
      const k = byKey.get(key)?.shift();
      if (k !== undefined) out[k] = outcome(k);
    };
    for (const row of successful) place(row, (k) => ({ ok: true, id: row.sf__Id || String(bodies[k]?.Id) }));
    for (const row of failed) {
      const message = row.sf__Error ?? 'refused';
      const [code, ...rest] = message.split(':');
      place(row, () => ({
        ok: false,
        error: salesforceItemError({ statusCode: code?.trim(), message: rest.join(':').trim() || message }),
      }));
    }
    return out.map(
      (o) =>
        o ?? {
          ok: false,
          error: new ConnectorError(
            'transient',
            `Salesforce bulk job ${job.id} (${info.state}) did not process the record: ${info.errorMessage ?? ''}`,
            'Salesforce did not process this record in its bulk job; the sync will retry.',
          ),
        },
    );
  }

  /**
   * Composite has no conditional update: right before an update or delete, the records with
   * `expected` values are read and compared. A record changed since Lockstep read it (or gone)
   * answers `version_conflict` with what it holds now, and is not written.
   */
  async function changedSince(
    object: string,
    metas: SalesforceFieldMeta[],
    names: string[],
    items: { id: string; expected?: Record<string, CanonicalValue> }[],
    every = false,
  ): Promise<{ changed: Map<string, RecordData | null>; present: Set<string> }> {
    const checked = items.filter((x) => x.expected && Object.keys(x.expected).length > 0);
    const changed = new Map<string, RecordData | null>();
    const toRead = every ? items : checked;
    if (toRead.length === 0) return { changed, present: new Set() };
    const objects = await readByIds(
      object,
      toRead.map((x) => x.id),
      names,
    );
    const byId = new Map(objects.map((o) => [String(o.Id), o]));
    for (const x of checked) {
      const o = byId.get(x.id);
      if (!o) {
        changed.set(x.id, null);
        continue;
      }
      for (const [name, expected] of Object.entries(x.expected ?? {})) {
        if (name === FULL_NAME && offersFullName(metas)) {
          const want = normalizeValue('text', expected ?? null);
          if (!want.ok || !valuesEqual(want.value, joinName(o.FirstName, o.LastName))) {
            changed.set(x.id, toRecord(metas, o));
            break;
          }
          continue;
        }
        const f = metas.find((m) => m.name === name);
        const type = f && canonicalType(f);
        if (!f || !type) continue;
        const want = normalizeValue(type, expected ?? null);
        const have = toCanonical(f, o[name]);
        if (!want.ok || !valuesEqual(type === 'boolean' ? (want.value ?? false) : want.value, have)) {
          changed.set(x.id, toRecord(metas, o));
          break;
        }
      }
    }
    return { changed, present: new Set(byId.keys()) };
  }

  /** Post-images: what Salesforce holds after the write (triggers may have changed it). */
  async function postImages(object: string, metas: SalesforceFieldMeta[], names: string[], ids: string[]) {
    const objects = ids.length > 0 ? await readByIds(object, ids, names) : [];
    return new Map(objects.map((o) => [String(o.Id), toRecord(metas, o)]));
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const object = objectName(tableId);
    const d = await describe(object);
    const { metas, names } = await readFields(object);
    const results: WriteResult[] = new Array(requests.length);
    let i = 0;
    while (i < requests.length) {
      const kind = requests[i]?.kind;
      let j = i;
      while (j < requests.length && requests[j]?.kind === kind) j++;
      const group = requests.slice(i, j);
      let out: WriteResult[];
      if (kind === 'create') {
        const creates = group as Extract<WriteRequest, { kind: 'create' }>[];
        const pending = creates.filter((r) => !idempotent.has(r.idempotencyKey));
        const outcomes = await createMany(
          object,
          d,
          pending.map((r) => r.fields),
        );
        pending.forEach((r, k) => {
          const o = outcomes[k];
          if (o?.ok) idempotent.set(r.idempotencyKey, o.id);
        });
        const byKey = new Map(pending.map((r, k) => [r.idempotencyKey, outcomes[k] as Outcome]));
        const ids = creates.map((r) => idempotent.get(r.idempotencyKey)).filter((x): x is string => !!x);
        const images = await postImages(object, metas, names, ids);
        out = creates.map((r) => {
          const fresh = byKey.get(r.idempotencyKey);
          if (fresh && !fresh.ok)
            return failure(fresh.error, fresh.existingId ? { existingId: fresh.existingId } : {});
          // A create made already (a retry with the same key) is answered with that record.
          const id = idempotent.get(r.idempotencyKey) as string;
          return { ok: true as const, remoteId: id, postImage: images.get(id) ?? null };
        });
      } else if (kind === 'update') {
        const updates = group as Extract<WriteRequest, { kind: 'update' }>[];
        const { changed } = await changedSince(
          object,
          metas,
          names,
          updates.map((u) => ({ id: u.remoteId, ...(u.expected ? { expected: u.expected } : {}) })),
        );
        const go = updates.filter((u) => !changed.has(u.remoteId));
        const outcomes = await updateMany(
          object,
          d,
          go.map((u) => ({ id: u.remoteId, fields: u.fields })),
        );
        const byId = new Map(go.map((u, k) => [u.remoteId, outcomes[k] as Outcome]));
        const images = await postImages(
          object,
          metas,
          names,
          go.filter((u) => byId.get(u.remoteId)?.ok).map((u) => u.remoteId),
        );
        out = updates.map((u) => {
          if (changed.has(u.remoteId)) return conflict(object, u.remoteId, changed.get(u.remoteId) ?? null);
          const o = byId.get(u.remoteId) as Outcome;
          if (!o.ok) return failure(o.error);
          return { ok: true as const, remoteId: u.remoteId, postImage: images.get(u.remoteId) ?? null };
        });
      } else {
        const deletes = group as Extract<WriteRequest, { kind: 'delete' }>[];
        // Every id is read first: one gone already is not deleted again; one edited since is spared.
        const { changed, present } = await changedSince(
          object,
          metas,
          names,
          deletes.map((x) => ({ id: x.remoteId, ...(x.expected ? { expected: x.expected } : {}) })),
          true,
        );
        const spared = new Set([...changed].filter(([, cur]) => cur !== null).map(([id]) => id));
        const go = [...new Set(deletes.map((x) => x.remoteId))].filter(
          (id) => present.has(id) && !spared.has(id),
        );
        const outcomes = await deleteMany(object, d, go);
        const byId = new Map(go.map((id, k) => [id, outcomes[k] as Outcome]));
        out = deletes.map((x) => {
          if (spared.has(x.remoteId)) return conflict(object, x.remoteId, changed.get(x.remoteId) ?? null);
          const o = byId.get(x.remoteId);
          if (o && !o.ok) return failure(o.error);
          return { ok: true as const, remoteId: x.remoteId, postImage: null };
        });
      }
      out.forEach((r, k) => {
        results[i + k] = r;
      });
      i = j;
    }
    return results;
  }

  return {
    capabilities: SALESFORCE_CAPABILITIES,
    client,
    describe,
    async fieldsOf(object) {
      return salesforceFields(await describe(object));
    },
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const object = objectName(tableId);
      const { metas, names } = await readFields(object);
      return (await readByIds(object, ids, names)).map((o) => toRecord(metas, o));
    },
  };
}
