/**
 * Airtable as a sync side (a TableConnector), on the Web API through the SDK's HttpClient and
 * RateLimiter (airtable-api.ts):
 * - read: a full scan fills each page from Airtable's pages of <= 100 (opaque offset); afterwards
 *   incremental reads with `filterByFormula=IS_AFTER(LAST_MODIFIED_TIME(), since)`, where `since` is
 *   the server's Date header at the start of the previous read minus one second (Airtable's
 *   timestamps are whole seconds). An expired offset restarts that read from its beginning.
 * - deletes: Airtable has no delete feed. The cursor keeps the set of record ids the connector knows
 *   (packed); at the end of an incremental read an id sweep (`fields[]` = the primary field only)
 *   lists the table's ids, and the known ids that are gone are reported as `deletedIds` (delete
 *   events). Small tables are swept on every read, large ones at most every `deleteSweepIntervalMs`.
 *   `scanComplete` is set only when a page holds the whole table (absence in it is then evidence).
 * - write: batches of 10 (create POST, update PATCH, delete DELETE ?records[]=); Airtable rejects a
 *   whole batch for one bad item, so a rejected batch is retried item by item for per-item results.
 *   Creates are idempotent through `syncIdField` (upsert with performUpsert.fieldsToMergeOn) when
 *   configured, otherwise through an in-process map of idempotency keys.
 * - 429 has no Retry-After: the client waits 30 s (configurable) and retries; 5xx and network
 *   errors back off; the rate limiter paces every request under 5 per second per base.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  normalizeValue,
  type RecordData,
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
  AIRTABLE_RATE_LIMIT,
  type AirtableClient,
  type AirtableClientOptions,
  airtableUserMessage,
  createAirtableClient,
} from './airtable-api';

export type AirtableField = { id: string; name: string; type: string; options?: Record<string, unknown> };
export type AirtableTable = {
  id: string;
  name: string;
  primaryFieldId: string;
  fields: AirtableField[];
  description?: string;
};

export type AirtableConnectorOptions = Omit<AirtableClientOptions, 'token'> & {
  /** A personal access token, or a function giving the current OAuth access token. */
  token: AirtableClientOptions['token'];
  baseId: string;
  /** Defaults to https://api.airtable.com; point it at the simulator in tests and the sandbox. */
  baseUrl?: string;
  /** A text field (name or id) per table that stores Lockstep's idempotency key, for upserts. */
  syncIdField?: Record<string, string>;
  /** How often at most a table with more than 2,000 records is swept for deletes (default 15 min). */
  deleteSweepIntervalMs?: number;
  now?: () => number;
  /** Webhooks this connection created: id -> the secret Airtable returned once, and its table scope. */
  webhooks?: Record<string, { macSecretBase64: string; tableId?: string }>;
};

/**
 * Checks `X-Airtable-Content-MAC: hmac-sha256=<hex>`: HMAC-SHA256 of the raw body with the
 * base64-decoded macSecret of the webhook.
 */
export function verifyAirtableNotification(
  macSecretBase64: string,
  headers: Record<string, string>,
  body: string,
): boolean {
  const header = Object.entries(headers).find(([k]) => k.toLowerCase() === 'x-airtable-content-mac')?.[1];
  if (!header?.startsWith('hmac-sha256=')) return false;
  const expected = createHmac('sha256', Buffer.from(macSecretBase64, 'base64')).update(body, 'utf8').digest();
  const given = Buffer.from(header.slice('hmac-sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const AIRTABLE_BATCH_SIZE = 10;
export const AIRTABLE_MAX_PAGE_SIZE = 100;

/** Airtable field type -> canonical type; undefined means not synced. */
export function canonicalType(field: AirtableField): CanonicalFieldType | undefined {
  switch (field.type) {
    case 'singleLineText':
    case 'multilineText':
      return 'text';
    case 'richText':
      return 'rich_text';
    case 'email':
      return 'email';
    case 'url':
      return 'url';
    case 'phoneNumber':
      return 'phone';
    case 'number':
    case 'percent':
    case 'autoNumber':
    case 'count':
    case 'rating':
      return 'number';
    case 'duration':
      return 'duration';
    case 'currency':
      return 'currency';
    case 'checkbox':
      return 'boolean';
    case 'singleSelect':
      return 'single_select';
    case 'multipleSelects':
      return 'multi_select';
    case 'date':
      return 'date';
    case 'dateTime':
    case 'createdTime':
    case 'lastModifiedTime':
      return 'datetime';
    case 'multipleRecordLinks':
      return 'relations';
    case 'multipleAttachments':
      return 'attachments';
    case 'formula':
    case 'rollup':
    case 'lookup':
    case 'multipleLookupValues':
    case 'singleCollaborator':
    case 'multipleCollaborators':
    case 'createdBy':
    case 'lastModifiedBy':
    case 'barcode':
    case 'aiText':
      return 'json';
    default:
      return undefined;
  }
}

const READ_ONLY = new Set([
  'formula',
  'rollup',
  'lookup',
  'count',
  'autoNumber',
  'createdTime',
  'lastModifiedTime',
  'createdBy',
  'lastModifiedBy',
  'button',
  'multipleLookupValues',
  // Written as objects Lockstep does not model: read, not written.
  'singleCollaborator',
  'multipleCollaborators',
  'barcode',
  'aiText',
  'externalSyncSource',
]);

export function isReadOnly(field: AirtableField): boolean {
  return READ_ONLY.has(field.type);
}

const SYMBOL_TO_CODE: Record<string, string> = { $: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY', CHF: 'CHF' };

export function currencyOf(field: AirtableField): { code: string; digits: number } {
  const symbol = String(field.options?.symbol ?? '$');
  return { code: SYMBOL_TO_CODE[symbol] ?? 'USD', digits: Number(field.options?.precision ?? 2) };
}

/** An Airtable cell value (absent = undefined) as a canonical value. */
export function toCanonical(field: AirtableField, raw: unknown): CanonicalValue {
  const type = canonicalType(field);
  if (!type) return null;
  if (type === 'currency') {
    if (typeof raw !== 'number') return null;
    const { code, digits } = currencyOf(field);
    return { minor: String(Math.round(raw * 10 ** digits)), code };
  }
  if (type === 'json') return raw === undefined || raw === null ? null : { json: raw as never };
  if (type === 'attachments' && Array.isArray(raw)) {
    raw = raw.map((a: { url: string; filename?: string; size?: number; type?: string }) => ({
      url: a.url,
      filename: a.filename ?? '',
      size: a.size ?? null,
      type: a.type ?? null,
    }));
  }
  const result = normalizeValue(type, raw ?? null);
  return result.ok ? result.value : null;
}

/** A canonical value as an Airtable cell value for writing. */
export function fromCanonical(field: AirtableField, value: CanonicalValue): unknown {
  if (value === null) return null;
  switch (canonicalType(field)) {
    case 'number':
      return Number(value);
    case 'datetime': {
      // Airtable keeps date-times to the millisecond: a finer fraction (PostgreSQL's microseconds)
      // is cut, as the field declares (datetimeDigits 3), so the engine compares at that precision.
      const d = new Date(String(value));
      return Number.isNaN(d.getTime()) ? value : d.toISOString();
    }
    case 'currency': {
      const { digits } = currencyOf(field);
      const minor =
        typeof value === 'object' && !Array.isArray(value) && 'minor' in value
          ? Number(value.minor)
          : Number(value);
      return minor / 10 ** digits;
    }
    case 'attachments':
      return (value as { url: string; filename: string }[]).map((a) => ({
        url: a.url,
        ...(a.filename ? { filename: a.filename } : {}),
      }));
    default:
      return value;
  }
}

type ReadCursor =
  | { v: 2; mode: 'scan'; offset?: string; since: string; seen: string; known?: string }
  | { v: 2; mode: 'changes'; offset?: string; since: string; next: string; known: string; sweptAt: number };

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable (or older) cursor means a full rescan, which the connector runs itself. */
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 2 && (c.mode === 'scan' || c.mode === 'changes') && typeof c.since === 'string') return c;
  } catch {
    // fall through
  }
  return null;
}

/** A set of record ids, packed small enough for a cursor (sorted, deflated, base64url). */
export function packIds(ids: Iterable<string>): string {
  const list = [...new Set(ids)].sort();
  return list.length === 0 ? '' : deflateRawSync(Buffer.from(list.join(','))).toString('base64url');
}
export function unpackIds(packed: string | undefined): Set<string> {
  if (!packed) return new Set();
  return new Set(
    inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8').split(',').filter(Boolean),
  );
}

type ApiRecord = { id: string; createdTime: string; fields: Record<string, unknown> };

export type AirtableConnector = TableConnector & {
  /** Verifies a notification ping with the secret of the webhook it names. */
  verifyWebhook(headers: Record<string, string>, body: string): boolean;
  /** A ping carries no data: it says which webhook (so which table, if scoped) to read again. */
  parseWebhook(headers: Record<string, string>, body: string): { tableRemoteId?: string }[];
  /** Tables with their fields, from the metadata API (cached). */
  describe(refresh?: boolean): Promise<AirtableTable[]>;
  /** Canonical field specs of a table, keyed by field id. */
  fieldsOf(
    tableId: string,
  ): Promise<{ remoteId: string; name: string; fieldType: CanonicalFieldType; readOnly: boolean }[]>;
  client: AirtableClient;
};

export const AIRTABLE_CAPABILITIES: Capabilities = {
  batchSize: AIRTABLE_BATCH_SIZE,
  incrementalRead: true,
  // Deletes are reported as events, found by the id sweep against the ids the cursor knows.
  deleteDetection: 'events',
  webhooks: true,
  rateLimit: AIRTABLE_RATE_LIMIT,
  // Every field of the (at most a minute old) schema, empty ones as null: see read().
  recordsCarryEveryField: true,
};

/** How old the table schema a read uses may be (one metadata request a minute per base at most). */
const SCHEMA_MAX_AGE_MS = 60_000;

/** Sweep small tables on every read; a sweep of a large one costs a request per 100 records. */
const SMALL_TABLE = 2_000;

export function createAirtableConnector(options: AirtableConnectorOptions): AirtableConnector {
  const client = createAirtableClient(options);
  const now = options.now ?? Date.now;
  const sweepEvery = options.deleteSweepIntervalMs ?? 15 * 60_000;
  const idempotent = new Map<string, string>();
  let tables: AirtableTable[] | undefined;
  const basePath = `/v0/${encodeURIComponent(options.baseId)}`;

  async function request(
    method: string,
    path: string,
    body?: unknown,
    extra: { idempotent?: boolean } = {},
  ): Promise<{ body: unknown; date: string | null }> {
    const res = await client.request({
      method,
      path,
      ...(body !== undefined ? { body } : {}),
      ...(extra.idempotent !== undefined ? { idempotent: extra.idempotent } : {}),
    });
    return { body: res.body, date: res.headers.get('date') };
  }

  let describedAt = 0;
  async function describe(refresh = false): Promise<AirtableTable[]> {
    if (tables && !refresh) return tables;
    const { body } = await request('GET', `/v0/meta/bases/${encodeURIComponent(options.baseId)}/tables`);
    tables = (body as { tables: AirtableTable[] }).tables;
    describedAt = now();
    return tables;
  }

  /** A table by id or name; `appX/tblY` (the runtime's remote id) is accepted for this base. */
  async function tableOf(tableRef: string): Promise<AirtableTable> {
    const slash = tableRef.indexOf('/');
    const tableId =
      slash > 0 && tableRef.slice(0, slash) === options.baseId ? tableRef.slice(slash + 1) : tableRef;
    let t = (await describe()).find((x) => x.id === tableId || x.name === tableId);
    if (!t) t = (await describe(true)).find((x) => x.id === tableId || x.name === tableId);
    if (!t)
      throw new ConnectorError('not_found', `No Airtable table ${tableId}`, airtableUserMessage('not_found'));
    return t;
  }

  function toRecord(table: AirtableTable, r: ApiRecord): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const f of table.fields) {
      if (!canonicalType(f)) continue;
      fields[f.id] = toCanonical(f, r.fields[f.id]);
    }
    return { id: r.id, fields };
  }

  function toApiFields(
    table: AirtableTable,
    fields: Record<string, CanonicalValue>,
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      const f = table.fields.find((x) => x.id === key || x.name === key);
      if (!f || isReadOnly(f) || !canonicalType(f)) continue;
      out[f.id] = fromCanonical(f, value);
    }
    return out;
  }

  /** Server time (from the Date header) minus one second: the next read's lower bound. */
  function sinceFrom(date: string | null): string {
    const t = date ? Date.parse(date) : Number.NaN;
    return new Date((Number.isNaN(t) ? now() : t) - 1000).toISOString();
  }

  const recordsPath = (table: AirtableTable) => `${basePath}/${encodeURIComponent(table.id)}`;

  /** One Airtable page (<= 100); null when the offset expired. */
  async function listPage(
    table: AirtableTable,
    query: Record<string, string | undefined>,
  ): Promise<{ records: ApiRecord[]; offset?: string; date: string | null } | null> {
    const q = new URLSearchParams({ returnFieldsByFieldId: 'true' });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
    try {
      const res = await request('GET', `${recordsPath(table)}?${q}`);
      const body = res.body as { records: ApiRecord[]; offset?: string };
      return { records: body.records, ...(body.offset ? { offset: body.offset } : {}), date: res.date };
    } catch (err) {
      if (err instanceof ConnectorError && err.code === 'cursor_invalid' && query.offset) return null;
      throw err;
    }
  }

  /** Every record id of the table, with as little data as Airtable allows (the primary field only). */
  async function sweepIds(table: AirtableTable): Promise<Set<string>> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const ids = new Set<string>();
      let offset: string | undefined;
      let expired = false;
      for (;;) {
        const page = await listPage(table, { pageSize: '100', 'fields[]': table.primaryFieldId, offset });
        if (!page) {
          expired = true;
          break;
        }
        for (const r of page.records) ids.add(r.id);
        offset = page.offset;
        if (!offset) break;
      }
      if (!expired) return ids;
    }
    throw new ConnectorError(
      'transient',
      'Airtable id sweep kept expiring',
      airtableUserMessage('transient'),
    );
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    // Airtable leaves empty fields out of records, so a deleted field looks empty. Reads see the
    // schema at most a minute old: a field gone from it is left out of the records (see toRecord),
    // and the runtime stops the pair instead of clearing the other side.
    if (now() - describedAt > SCHEMA_MAX_AGE_MS) await describe(true);
    const table = await tableOf(tableId);
    const want = Math.max(1, opts.pageSize);
    let c = decode(cursor);
    for (let restart = 0; ; restart++) {
      const changes = c?.mode === 'changes' ? c : null;
      const records: ApiRecord[] = [];
      let offset = c?.offset;
      let firstDate: string | null | undefined;
      let expired = false;
      do {
        const page = await listPage(table, {
          pageSize: String(Math.min(AIRTABLE_MAX_PAGE_SIZE, want - records.length)),
          offset,
          filterByFormula: changes ? `IS_AFTER(LAST_MODIFIED_TIME(), '${changes.since}')` : undefined,
        });
        if (!page) {
          expired = true;
          break;
        }
        if (firstDate === undefined) firstDate = page.date;
        records.push(...page.records);
        offset = page.offset;
      } while (offset && records.length < want);
      if (expired) {
        // The offset expired between two reads: this read starts again from its beginning (a scan
        // keeps what it knew, so its end can still report deletes; re-read changes are harmless).
        if (restart >= 2)
          throw new ConnectorError(
            'transient',
            'Airtable offsets keep expiring',
            airtableUserMessage('transient'),
          );
        c = !c
          ? null
          : c.mode === 'scan'
            ? { v: 2, mode: 'scan', since: c.since, seen: '', ...(c.known ? { known: c.known } : {}) }
            : { ...c, offset: undefined, next: c.next };
        if (c?.mode === 'scan' && !c.known) c = null;
        continue;
      }
      const hasMore = offset !== undefined;
      const readIds = records.map((r) => r.id);
      // The first page of a read fixes where the next read starts.
      const startedSince = c?.offset
        ? c.mode === 'changes'
          ? c.next
          : c.since
        : sinceFrom(firstDate ?? null);
      let next: ReadCursor;
      let deletedIds: string[] = [];
      if (!changes) {
        const seen = unpackIds(c?.mode === 'scan' ? c.seen : undefined);
        for (const id of readIds) seen.add(id);
        const known = c?.mode === 'scan' ? c.known : undefined;
        if (hasMore) {
          next = {
            v: 2,
            mode: 'scan',
            offset,
            since: startedSince,
            seen: packIds(seen),
            ...(known ? { known } : {}),
          };
        } else {
          // A rescan that knew the table before reports what it no longer found.
          if (known) deletedIds = [...unpackIds(known)].filter((id) => !seen.has(id));
          next = {
            v: 2,
            mode: 'changes',
            since: startedSince,
            next: startedSince,
            known: packIds(seen),
            sweptAt: now(),
          };
        }
      } else {
        let known = unpackIds(changes.known);
        for (const id of readIds) known.add(id);
        if (hasMore) {
          next = { ...changes, offset, known: packIds(known), next: startedSince };
        } else {
          let sweptAt = changes.sweptAt;
          if (known.size <= SMALL_TABLE || now() - sweptAt >= sweepEvery) {
            // Ids made after the sweep come with the next read's changes.
            const present = await sweepIds(table);
            deletedIds = [...known].filter((id) => !present.has(id));
            known = present;
            sweptAt = now();
          }
          next = {
            v: 2,
            mode: 'changes',
            since: startedSince,
            next: startedSince,
            known: packIds(known),
            sweptAt,
          };
        }
      }
      return {
        records: records.map((r) => toRecord(table, r)),
        deletedIds,
        nextCursor: encode(next),
        hasMore,
        // Absence is evidence only when this one page holds the whole table.
        scanComplete: !c && !hasMore,
      };
    }
  }

  function itemLevel(err: unknown): boolean {
    return err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found');
  }

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), airtableUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }

  /** Runs a batch; if Airtable rejects it as a whole (422), runs each item alone for per-item results. */
  async function batched<T>(items: T[], run: (chunk: T[]) => Promise<WriteResult[]>): Promise<WriteResult[]> {
    const out: WriteResult[] = [];
    for (let i = 0; i < items.length; i += AIRTABLE_BATCH_SIZE) {
      const chunk = items.slice(i, i + AIRTABLE_BATCH_SIZE);
      try {
        out.push(...(await run(chunk)));
      } catch (err) {
        // Rate limits, outages and refused credentials concern the whole run: the runtime retries it.
        if (!itemLevel(err)) throw err;
        if (chunk.length === 1) {
          out.push(failure(err));
          continue;
        }
        for (const item of chunk) {
          try {
            out.push(...(await run([item])));
          } catch (e) {
            if (!itemLevel(e)) throw e;
            out.push(failure(e));
          }
        }
      }
    }
    return out;
  }

  function webhookOf(body: string): { macSecretBase64: string; tableId?: string } | undefined {
    try {
      const ping = JSON.parse(body) as { base?: { id?: string }; webhook?: { id?: string } };
      if (ping.base?.id !== options.baseId || !ping.webhook?.id) return undefined;
      return options.webhooks?.[ping.webhook.id];
    } catch {
      return undefined;
    }
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const table = await tableOf(tableId);
    const results: WriteResult[] = new Array(requests.length);
    const syncField = options.syncIdField?.[table.id] ?? options.syncIdField?.[table.name];
    const syncFieldId = syncField
      ? table.fields.find((f) => f.id === syncField || f.name === syncField)?.id
      : undefined;

    // Consecutive requests of one kind go together, in order.
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
          const records = chunk.map(({ r }) => {
            const fields = toApiFields(table, (r as Extract<WriteRequest, { kind: 'create' }>).fields);
            if (syncFieldId) fields[syncFieldId] = r.idempotencyKey;
            return { fields };
          });
          const body = syncFieldId
            ? { records, performUpsert: { fieldsToMergeOn: [syncFieldId] }, returnFieldsByFieldId: true }
            : { records, returnFieldsByFieldId: true };
          // An upsert on the sync id field may be sent twice; a plain create may not (it would duplicate).
          const res = await request(syncFieldId ? 'PATCH' : 'POST', recordsPath(table), body, {
            idempotent: syncFieldId !== undefined,
          });
          return (res.body as { records: ApiRecord[] }).records.map((rec, k) => {
            idempotent.set(chunk[k]!.r.idempotencyKey, rec.id);
            return { ok: true as const, remoteId: rec.id, postImage: toRecord(table, rec) };
          });
        });
        const byKey = new Map(pending.map(({ r }, k) => [r.idempotencyKey, done[k]!]));
        groupResults = await Promise.all(
          group.map(async ({ r }) => {
            const fresh = byKey.get(r.idempotencyKey);
            if (fresh) return fresh;
            // A retried create: answer with the record made the first time.
            const remoteId = idempotent.get(r.idempotencyKey)!;
            try {
              const res = await request(
                'GET',
                `${recordsPath(table)}/${encodeURIComponent(remoteId)}?returnFieldsByFieldId=true`,
              );
              return { ok: true as const, remoteId, postImage: toRecord(table, res.body as ApiRecord) };
            } catch (err) {
              return failure(err);
            }
          }),
        );
      } else if (kind === 'update') {
        groupResults = await batched(group, async (chunk) => {
          const records = chunk.map(({ r }) => {
            const u = r as Extract<WriteRequest, { kind: 'update' }>;
            return { id: u.remoteId, fields: toApiFields(table, u.fields) };
          });
          // A partial update sets the same values when sent twice: safe to retry.
          const res = await request(
            'PATCH',
            recordsPath(table),
            { records, returnFieldsByFieldId: true },
            { idempotent: true },
          );
          return (res.body as { records: ApiRecord[] }).records.map((rec) => ({
            ok: true as const,
            remoteId: rec.id,
            postImage: toRecord(table, rec),
          }));
        });
      } else {
        groupResults = await batched(group, async (chunk) => {
          const q = new URLSearchParams();
          for (const { r } of chunk)
            q.append('records[]', (r as Extract<WriteRequest, { kind: 'delete' }>).remoteId);
          try {
            await request('DELETE', `${recordsPath(table)}?${q}`);
          } catch (err) {
            // Deleting a record that is already gone is a success (idempotent replay).
            const gone = err instanceof ConnectorError && err.code === 'not_found';
            if (!(gone && chunk.length === 1)) throw err;
          }
          return chunk.map(({ r }) => ({
            ok: true as const,
            remoteId: (r as Extract<WriteRequest, { kind: 'delete' }>).remoteId,
            postImage: null,
          }));
        });
      }
      for (const [k, g] of group.entries()) results[g.index] = groupResults[k]!;
      i = j;
    }
    return results;
  }

  return {
    capabilities: AIRTABLE_CAPABILITIES,
    client,
    describe,
    verifyWebhook(headers, body) {
      const hook = webhookOf(body);
      return hook ? verifyAirtableNotification(hook.macSecretBase64, headers, body) : false;
    },
    parseWebhook(_headers, body) {
      const hook = webhookOf(body);
      if (!hook) return [];
      return [hook.tableId ? { tableRemoteId: hook.tableId } : {}];
    },
    async fieldsOf(tableId) {
      const table = await tableOf(tableId);
      return table.fields.flatMap((f) => {
        const t = canonicalType(f);
        return t ? [{ remoteId: f.id, name: f.name, fieldType: t, readOnly: isReadOnly(f) }] : [];
      });
    },
    read,
    write,
  };
}
