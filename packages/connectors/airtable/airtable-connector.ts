/**
 * Airtable as a sync side (a TableConnector), on the Web API:
 * - read: full scans page by page (<= 100, opaque offset); afterwards incremental reads with
 *   `filterByFormula=IS_AFTER(LAST_MODIFIED_TIME(), since)`, where `since` is the server's Date header
 *   at the start of the previous read minus one second (Airtable's timestamps are whole seconds).
 *   Airtable has no delete feed: deletes are detected by absence after a complete scan.
 * - write: batches of 10 (create POST, update PATCH, delete DELETE ?records[]=); Airtable rejects a
 *   whole batch for one bad item, so a rejected batch is retried item by item for per-item results.
 *   Creates are idempotent through `syncIdField` (upsert with performUpsert.fieldsToMergeOn) when
 *   configured, otherwise through an in-process map of idempotency keys.
 * - 429 has no Retry-After: wait 30 s (configurable) and retry; 5xx and network errors back off.
 *
 * TODO: move the HTTP calls to the SDK's HttpClient and RateLimiter (sdk/http-client.ts,
 * sdk/rate-limiter.ts) once they settle; this file uses plain fetch on purpose for now.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  normalizeValue,
  type RecordData,
} from '@lockstep/engine';
import {
  ConnectorError,
  type ConnectorErrorCode,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';

export type AirtableField = { id: string; name: string; type: string; options?: Record<string, unknown> };
export type AirtableTable = { id: string; name: string; primaryFieldId: string; fields: AirtableField[] };

export type AirtableConnectorOptions = {
  token: string;
  baseId: string;
  /** Defaults to https://api.airtable.com; point it at the simulator in tests. */
  baseUrl?: string;
  /** A text field (name or id) per table that stores Lockstep's idempotency key, for upserts. */
  syncIdField?: Record<string, string>;
  /** How long to wait after a 429 (Airtable: 30 s). */
  rateLimitWaitMs?: number;
  /** Attempts per request, the first included. */
  maxAttempts?: number;
  /** Client-side pacing per base (Airtable allows 5 requests per second); 0 turns it off. */
  requestsPerSecond?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
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
      return 'number';
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
]);

export function isReadOnly(field: AirtableField): boolean {
  return READ_ONLY.has(field.type);
}

const SYMBOL_TO_CODE: Record<string, string> = { $: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY', CHF: 'CHF' };

function currencyOf(field: AirtableField): { code: string; digits: number } {
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
  | { mode: 'scan'; offset?: string; since: string }
  | { mode: 'changes'; offset?: string; since: string; next: string };

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(s: string): ReadCursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if ((c.mode === 'scan' || c.mode === 'changes') && typeof c.since === 'string') return c;
  } catch {
    // fall through
  }
  throw new ConnectorError(
    'cursor_invalid',
    'Unreadable Airtable cursor',
    'The sync position was lost; a full rescan will run.',
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
};

function errorCodeFor(status: number): ConnectorErrorCode {
  if (status === 401) return 'auth_invalid';
  if (status === 403) return 'permission_denied';
  if (status === 404) return 'not_found';
  if (status === 422 || status === 400) return 'validation';
  if (status === 429) return 'rate_limited';
  return 'transient';
}

function messageOf(body: unknown, status: number): string {
  const b = body as { error?: unknown; errors?: { message?: string }[] } | undefined;
  if (b && typeof b.error === 'object' && b.error !== null) {
    const e = b.error as { type?: string; message?: string };
    return `${e.type ?? 'ERROR'}: ${e.message ?? ''}`.trim();
  }
  if (b && typeof b.error === 'string') return b.error;
  if (b?.errors?.[0]?.message) return b.errors[0].message;
  return `HTTP ${status}`;
}

function userMessage(code: ConnectorErrorCode, detail: string): string {
  switch (code) {
    case 'auth_invalid':
      return 'Airtable refused the access token. Reconnect Airtable.';
    case 'permission_denied':
      return 'The Airtable token cannot access this base or table, or lacks a scope. Check its access in Airtable.';
    case 'rate_limited':
      return 'Airtable is rate limiting this base; the sync will continue shortly.';
    case 'validation':
      return `Airtable refused the value: ${detail}`;
    case 'not_found':
      return 'The Airtable record or table no longer exists.';
    default:
      return 'Airtable is not answering right now; the sync will retry.';
  }
}

export function createAirtableConnector(options: AirtableConnectorOptions): AirtableConnector {
  const baseUrl = (options.baseUrl ?? 'https://api.airtable.com').replace(/\/$/, '');
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxAttempts = options.maxAttempts ?? 4;
  const rateLimitWaitMs = options.rateLimitWaitMs ?? 30_000;
  const idempotent = new Map<string, string>();
  let tables: AirtableTable[] | undefined;
  const perSecond = options.requestsPerSecond ?? 5;
  const sent: number[] = [];

  /**
   * Waits until one more request fits in the rolling window. The window is a little longer than a
   * second: requests sent a second apart can arrive closer together.
   */
  const windowMs = 1_150;
  async function pace(): Promise<void> {
    if (perSecond <= 0) return;
    for (;;) {
      const now = Date.now();
      while (sent.length && sent[0]! <= now - windowMs) sent.shift();
      if (sent.length < perSecond) {
        sent.push(now);
        return;
      }
      await sleep(sent[0]! + windowMs - now + 1);
    }
  }

  async function request(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ body: unknown; date: string | null }> {
    let lastError: ConnectorError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      let res: Response;
      await pace();
      try {
        res = await doFetch(`${baseUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${options.token}`,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        lastError = new ConnectorError(
          'transient',
          `Airtable request failed: ${err instanceof Error ? err.message : String(err)}`,
          userMessage('transient', ''),
        );
        if (attempt < maxAttempts) await sleep(Math.min(250 * 2 ** attempt, 5_000));
        continue;
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (res.ok) return { body: parsed, date: res.headers.get('date') };
      const code = errorCodeFor(res.status);
      const detail = messageOf(parsed, res.status);
      lastError = new ConnectorError(
        code,
        `Airtable ${method} ${path}: ${res.status} ${detail}`,
        userMessage(code, detail),
        code === 'rate_limited' ? rateLimitWaitMs : null,
      );
      if (code === 'rate_limited' && attempt < maxAttempts) {
        await sleep(rateLimitWaitMs);
        continue;
      }
      if (code === 'transient' && attempt < maxAttempts) {
        await sleep(Math.min(250 * 2 ** attempt, 5_000));
        continue;
      }
      throw lastError;
    }
    throw (
      lastError ?? new ConnectorError('transient', 'Airtable request failed', userMessage('transient', ''))
    );
  }

  async function describe(refresh = false): Promise<AirtableTable[]> {
    if (tables && !refresh) return tables;
    const { body } = await request('GET', `/v0/meta/bases/${options.baseId}/tables`);
    tables = (body as { tables: AirtableTable[] }).tables;
    return tables;
  }

  async function tableOf(tableId: string): Promise<AirtableTable> {
    let t = (await describe()).find((x) => x.id === tableId || x.name === tableId);
    if (!t) t = (await describe(true)).find((x) => x.id === tableId || x.name === tableId);
    if (!t)
      throw new ConnectorError('not_found', `No Airtable table ${tableId}`, userMessage('not_found', ''));
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
    return new Date((Number.isNaN(t) ? Date.now() : t) - 1000).toISOString();
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const table = await tableOf(tableId);
    const c = cursor ? decode(cursor) : undefined;
    const q = new URLSearchParams({
      pageSize: String(Math.max(1, Math.min(AIRTABLE_MAX_PAGE_SIZE, opts.pageSize))),
      returnFieldsByFieldId: 'true',
    });
    if (c?.offset) q.set('offset', c.offset);
    if (c?.mode === 'changes') q.set('filterByFormula', `IS_AFTER(LAST_MODIFIED_TIME(), '${c.since}')`);
    let res: { body: unknown; date: string | null };
    try {
      res = await request('GET', `/v0/${options.baseId}/${table.id}?${q}`);
    } catch (err) {
      if (err instanceof ConnectorError && err.code === 'validation' && c?.offset) {
        throw new ConnectorError(
          'cursor_invalid',
          err.message,
          'The sync position expired; a full rescan will run.',
        );
      }
      throw err;
    }
    const body = res.body as { records: ApiRecord[]; offset?: string };
    const records = body.records.map((r) => toRecord(table, r));
    const hasMore = body.offset !== undefined;
    // The first page of a read fixes where the next read starts.
    const startedSince = c?.offset ? (c.mode === 'changes' ? c.next : c.since) : sinceFrom(res.date);
    let next: ReadCursor;
    if (!c || c.mode === 'scan') {
      next = hasMore
        ? { mode: 'scan', offset: body.offset!, since: startedSince }
        : { mode: 'changes', since: startedSince, next: startedSince };
    } else {
      next = hasMore
        ? { mode: 'changes', offset: body.offset!, since: c.since, next: startedSince }
        : { mode: 'changes', since: startedSince, next: startedSince };
    }
    return {
      records,
      deletedIds: [],
      nextCursor: encode(next),
      hasMore,
      scanComplete: (!c || c.mode === 'scan') && !hasMore,
    };
  }

  function itemLevel(err: unknown): boolean {
    return err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found');
  }

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), userMessage('transient', ''));
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
          const res = await request(
            syncFieldId ? 'PATCH' : 'POST',
            `/v0/${options.baseId}/${table.id}`,
            body,
          );
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
                `/v0/${options.baseId}/${table.id}/${remoteId}?returnFieldsByFieldId=true`,
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
          const res = await request('PATCH', `/v0/${options.baseId}/${table.id}`, {
            records,
            returnFieldsByFieldId: true,
          });
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
            await request('DELETE', `/v0/${options.baseId}/${table.id}?${q}`);
          } catch (err) {
            // Deleting a record that is already gone is a success (idempotent replay).
            const gone = err instanceof ConnectorError && /ROW_DOES_NOT_EXIST|NOT_FOUND/.test(err.message);
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
    capabilities: {
      batchSize: AIRTABLE_BATCH_SIZE,
      incrementalRead: true,
      deleteDetection: 'full_scan',
      webhooks: true,
      rateLimit: { scope: 'base', windows: [{ limit: 5, windowMs: 1000 }] },
    },
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
