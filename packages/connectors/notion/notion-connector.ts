/**
 * Notion as a sync side (a TableConnector) on API version 2025-09-03, where a database holds data
 * sources and pages live in a data source. A "table" is a data source; a record is a page; fields
 * are keyed by property id (stable across renames).
 *
 * - HTTP through the SDK's HttpClient (timeouts, retries honouring Retry-After seconds, Notion error
 *   codes mapped to the connector codes) paced by the SDK's RateLimiter at 3 requests per second per
 *   integration token (Notion's documented average).
 * - read: a full scan pages through `POST /v1/data_sources/{id}/query` (<= 100 per request,
 *   start_cursor/next_cursor). Later reads ask for `last_edited_time on_or_after <since>` sorted
 *   ascending. Notion rounds last_edited_time down to the minute, so <since> is the server time at
 *   the start of the previous pass, floored to the minute, minus an overlap (one minute by default),
 *   and pages re-read in that overlap are dropped when their content hash equals what was delivered.
 *   Trashed pages are not returned by queries: deletes are detected by absence when one page holds
 *   the whole data source (scanComplete), at the end of every pass of changes by a query of the
 *   pages trashed since its lower bound (`in_trash: true`), or by `fetchPages` after a page.deleted
 *   webhook.
 * - write: one page per request (create POST /v1/pages, update PATCH, delete = PATCH in_trash),
 *   within Notion's limits (2000 characters per rich text segment, 100 segments, 100 relations);
 *   values beyond them fail their item with a validation error before any request.
 * - rich text <-> Markdown through the engine's helpers (see rich-text.ts); titles are plain text.
 * - webhooks: X-Notion-Signature `sha256=` HMAC of the raw body keyed with the subscription's
 *   verification token; events carry ids only, parsed to (data source, page) hints to read again.
 */
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  hashRecord,
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
import { HttpClient, type HttpClientOptions, type HttpRequest, type HttpResponse } from '../sdk/http-client';
import {
  createMemoryRateLimitStore,
  RateLimiter,
  type RateLimitPolicy,
  type RateLimitStore,
} from '../sdk/rate-limiter';
import { hmacSha256, verifyHmacSha256 } from '../sdk/webhooks';
import {
  markdownToRichText,
  type NotionRichText,
  type NotionRichTextInput,
  plainToRichText,
  richTextToMarkdown,
} from './rich-text';

export const NOTION_API_VERSION = '2025-09-03';
export const NOTION_MAX_PAGE_SIZE = 100;
export const NOTION_BATCH_SIZE = 1;
export const NOTION_RELATION_MAX = 100;
export const NOTION_MULTI_SELECT_MAX = 100;
export const NOTION_RATE_LIMIT: RateLimitPolicy = { scope: 'token', windows: [{ limit: 3, windowMs: 1000 }] };
/** Re-read this much before the previous pass's (minute-floored) start: last_edited_time is coarse. */
export const DEFAULT_OVERLAP_MS = 60_000;
/** Dedupe memory kept in a cursor; beyond it a few pages may be delivered twice (harmless). */
const MAX_SEEN = 5000;
/** The `seen` mark of a page reported deleted (trashed) by a pass. */
const TRASHED = 'trashed';

// ---------------------------------------------------------------------------------------------
// Notion shapes

export type NotionProperty = {
  id: string;
  name: string;
  type: string;
  select?: { options: { id: string; name: string; color?: string }[] };
  multi_select?: { options: { id: string; name: string; color?: string }[] };
  status?: { options: { id: string; name: string; color?: string }[] };
  relation?: { data_source_id?: string; database_id?: string };
};

export type NotionDataSource = {
  id: string;
  title?: NotionRichText[];
  parent?: { database_id?: string };
  properties: Record<string, NotionProperty>;
};

export type NotionPage = {
  object: 'page';
  id: string;
  last_edited_time: string;
  created_time: string;
  in_trash?: boolean;
  archived?: boolean;
  parent?: { data_source_id?: string; database_id?: string };
  properties: Record<string, { id: string; type: string; [k: string]: unknown }>;
};

type QueryResponse = {
  results: NotionPage[];
  next_cursor: string | null;
  has_more: boolean;
  /** `incomplete` when the query stopped at Notion's 10,000-result limit (has_more is then false). */
  request_status?: { type?: string; incomplete_reason?: string };
};

export type NotionField = {
  remoteId: string;
  name: string;
  /** The Notion property type. */
  notionType: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  choices?: string[];
  /** For relations: the data source the related pages live in. */
  relationDataSourceId?: string;
};

export type NotionTable = { id: string; name: string; databaseId: string | null; fields: NotionField[] };

// ---------------------------------------------------------------------------------------------
// Types

const READ_ONLY = new Set([
  'formula',
  'rollup',
  'created_time',
  'last_edited_time',
  'created_by',
  'last_edited_by',
  'unique_id',
  'people',
  'button',
  'verification',
]);

/** Notion property type -> canonical type; undefined means not synced. Dates depend on the values seen. */
export function canonicalType(type: string, datesHaveTime = false): CanonicalFieldType | undefined {
  switch (type) {
    case 'title':
    case 'unique_id':
      return 'text';
    case 'rich_text':
      return 'rich_text';
    case 'number':
      return 'number';
    case 'select':
    case 'status':
      return 'single_select';
    case 'multi_select':
      return 'multi_select';
    case 'date':
      return datesHaveTime ? 'datetime' : 'date';
    case 'checkbox':
      return 'boolean';
    case 'email':
      return 'email';
    case 'url':
      return 'url';
    case 'phone_number':
      return 'phone';
    case 'relation':
      return 'relations';
    case 'files':
      return 'attachments';
    case 'created_time':
    case 'last_edited_time':
      return 'datetime';
    case 'formula':
    case 'rollup':
    case 'people':
    case 'created_by':
    case 'last_edited_by':
      return 'json';
    default:
      return undefined;
  }
}

export function isReadOnlyType(type: string): boolean {
  return READ_ONLY.has(type);
}

// ---------------------------------------------------------------------------------------------
// Errors

const NOTION_CODES: Record<string, ConnectorErrorCode> = {
  unauthorized: 'auth_invalid',
  invalid_grant: 'auth_invalid',
  restricted_resource: 'permission_denied',
  object_not_found: 'not_found',
  validation_error: 'validation',
  invalid_json: 'validation',
  invalid_request: 'validation',
  invalid_request_url: 'validation',
  missing_version: 'validation',
  conflict_error: 'version_conflict',
  rate_limited: 'rate_limited',
  internal_server_error: 'transient',
  service_unavailable: 'transient',
  database_connection_unavailable: 'transient',
  gateway_timeout: 'transient',
  service_overload: 'transient',
};

function userMessage(code: ConnectorErrorCode, detail: string): string {
  switch (code) {
    case 'auth_invalid':
      return 'Notion refused the access token. Reconnect Notion.';
    case 'permission_denied':
      return 'The Notion integration lacks a capability (read, update or insert content) for this. Check its capabilities in Notion.';
    case 'not_found':
      return 'Notion could not find this page or data source. Share it with the Lockstep integration (••• → Connections), or it was deleted.';
    case 'validation':
      return `Notion refused the value: ${detail}`;
    case 'rate_limited':
      return 'Notion is rate limiting the integration; the sync will continue shortly.';
    case 'version_conflict':
      return 'The page changed in Notion at the same time; Lockstep will try again.';
    default:
      return 'Notion is not answering right now; the sync will retry.';
  }
}

/** Notion's error body `{object:'error', status, code, message}` -> a ConnectorError (null: default mapping). */
export function mapNotionError(status: number, body: unknown): ConnectorError | null {
  const b = body as { object?: string; code?: string; message?: string } | null;
  const fromStatus: ConnectorErrorCode | undefined = status === 529 ? 'transient' : undefined;
  const code = (b?.code ? NOTION_CODES[b.code] : undefined) ?? fromStatus;
  if (!code) return null;
  const detail = b?.message ?? `HTTP ${status}`;
  return new ConnectorError(
    code,
    `Notion ${status} ${b?.code ?? ''}: ${detail}`.trim(),
    userMessage(code, detail),
  );
}

// ---------------------------------------------------------------------------------------------
// Cursors

type ReadCursor = {
  v: 1;
  m: 'scan' | 'changes';
  /** Notion's next_cursor inside the current pass. */
  c?: string;
  /** Server time (ms) at the start of the current pass. */
  hw?: number;
  /** changes: lower bound (ms) for last_edited_time. */
  since?: number;
  /** Content hashes delivered by the previous pass, for pages inside this pass's overlap. */
  seen?: Record<string, string>;
  /** Hashes gathered in this pass, for the next one. */
  next?: Record<string, string>;
  /**
   * scan: created_time (ISO) the pass goes on from after a query reached Notion's 10,000-result
   * limit; the next query asks for pages created on or after it.
   */
  a?: string;
  /** changes: the same for last_edited_time (ms); `since` stays the pass's bound for trashed pages. */
  from?: number;
};

const encodeCursor = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(s: string): ReadCursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.m === 'scan' || (c.m === 'changes' && typeof c.since === 'number'))) return c;
  } catch {
    // fall through
  }
  throw new ConnectorError(
    'cursor_invalid',
    'Unreadable Notion cursor',
    'The sync position was lost; a full rescan will run.',
  );
}

function capSeen(seen: Record<string, string>): Record<string, string> {
  const entries = Object.entries(seen);
  return entries.length <= MAX_SEEN ? seen : Object.fromEntries(entries.slice(-MAX_SEEN));
}

// ---------------------------------------------------------------------------------------------
// Connector

export type NotionConnectorOptions = {
  /** Internal integration token (`ntn_...` / `secret_...`) or OAuth access token; a function is asked per request. */
  token: string | (() => string | Promise<string>);
  /** Defaults to https://api.notion.com; point it at the simulator in tests. */
  baseUrl?: string;
  notionVersion?: string;
  /** Shared rate-limit store (Postgres in production, so workers together stay under 3 req/s). */
  rateLimitStore?: RateLimitStore;
  /** Overrides Notion's documented 3 requests per second (tests). */
  rateLimit?: RateLimitPolicy;
  /** Key of the rate-limit budget (the integration); defaults to one derived from the token. */
  rateLimitKey?: string;
  overlapMs?: number;
  /** A rich_text property (name or id) per data source that stores Lockstep's idempotency key. */
  syncIdProperty?: Record<string, string>;
  /** The verification token Notion POSTed when the webhook subscription was created. */
  webhookVerificationToken?: string;
  /**
   * Notion refused the token it was given (401): renew it (OAuth refresh) and say whether a request
   * may go again. Called with the token that was refused; each request is sent again at most once.
   */
  onAuthFailure?: (refusedToken: string) => Promise<boolean>;
  http?: Partial<
    Pick<HttpClientOptions, 'timeoutMs' | 'maxAttempts' | 'baseDelayMs' | 'maxRetryAfterMs' | 'sleep'>
  >;
};

export type NotionWebhookHint = { tableRemoteId?: string; recordId?: string; deleted?: boolean };

export type NotionConnector = TableConnector & {
  http: HttpClient;
  /** GET /v1/users/me: the token works. */
  check(): Promise<{ botId: string; name: string | null }>;
  /** Data sources shared with the integration (POST /v1/search), with their database. */
  listDataSources(): Promise<{ id: string; name: string; databaseId: string | null }[]>;
  /** The data sources of one database (GET /v1/databases/{id}). */
  dataSourcesOfDatabase(databaseId: string): Promise<{ id: string; name: string }[]>;
  /** A data source's properties as canonical fields (cached; `refresh` to re-read). */
  describe(dataSourceId: string, refresh?: boolean): Promise<NotionTable>;
  fieldsOf(dataSourceId: string): Promise<NotionField[]>;
  /** Reads pages by id (after webhook hints): trashed or missing pages come back as deleted. */
  fetchPages(
    dataSourceId: string,
    pageIds: string[],
  ): Promise<{ records: RecordData[]; deletedIds: string[] }>;
  verifyWebhook(headers: Record<string, string | string[] | undefined>, body: string): boolean;
  /** Ids-only events -> which data source (and page) to read again; the verification handshake gives []. */
  parseWebhook(headers: Record<string, string | string[] | undefined>, body: string): NotionWebhookHint[];
};

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

/** The `verification_token` of Notion's one-time subscription handshake, if this body is one. */
export function notionVerificationToken(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    return typeof parsed.verification_token === 'string' && !('type' in parsed)
      ? parsed.verification_token
      : null;
  } catch {
    return null;
  }
}

export function verifyNotionSignature(
  verificationToken: string,
  signature: string | undefined,
  body: string,
): boolean {
  return verifyHmacSha256({ secret: verificationToken, payload: body, signature, prefix: 'sha256=' });
}

/** What Notion would put in X-Notion-Signature (for tests and local tooling). */
export function signNotionBody(verificationToken: string, body: string): string {
  return `sha256=${hmacSha256(verificationToken, body)}`;
}

/** The HTTP client, sending a request again once after a 401 when the token could be renewed. */
class RenewingHttpClient extends HttpClient {
  constructor(
    private readonly currentToken: () => Promise<string>,
    private readonly onAuthFailure: NotionConnectorOptions['onAuthFailure'],
    options: HttpClientOptions,
  ) {
    super(options);
  }

  override async request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>> {
    if (!this.onAuthFailure) return super.request<T>(request);
    const sent = await this.currentToken();
    try {
      return await super.request<T>(request);
    } catch (error) {
      // A 401 means Notion did not act on the request: sending it again is safe.
      if (!(error instanceof ConnectorError && error.code === 'auth_invalid')) throw error;
      if (!(await this.onAuthFailure(sent))) throw error;
      return super.request<T>(request);
    }
  }
}

const itemLevel = (e: unknown): e is ConnectorError =>
  e instanceof ConnectorError && (e.code === 'validation' || e.code === 'not_found');

function failure(e: ConnectorError): WriteResult {
  return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
}

const invalid = (message: string) =>
  new ConnectorError('validation', message, userMessage('validation', message));

export function createNotionConnector(options: NotionConnectorOptions): NotionConnector {
  const version = options.notionVersion ?? NOTION_API_VERSION;
  const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
  const policy = options.rateLimit ?? NOTION_RATE_LIMIT;
  const limiter = new RateLimiter(policy, options.rateLimitStore ?? createMemoryRateLimitStore(), {
    ...(options.http?.sleep ? { sleep: options.http.sleep } : {}),
  });
  const token = async () => (typeof options.token === 'function' ? await options.token() : options.token);
  let limiterKey: string | undefined = options.rateLimitKey;
  const http = new RenewingHttpClient(token, options.onAuthFailure, {
    baseUrl: options.baseUrl ?? 'https://api.notion.com',
    headers: async () => ({ authorization: `Bearer ${await token()}`, 'notion-version': version }),
    mapError: (status, body) => mapNotionError(status, body),
    acquirePermit: async (cost) => {
      limiterKey ??= `notion:${hmacSha256('lockstep-rate-limit', await token()).slice(0, 24)}`;
      await limiter.acquire(limiterKey, cost);
    },
    ...options.http,
  });
  const tables = new Map<string, NotionTable>();
  const schemas = new Map<string, NotionDataSource>();
  const createdByKey = new Map<string, string>();

  async function describe(dataSourceId: string, refresh = false): Promise<NotionTable> {
    const cached = tables.get(dataSourceId);
    if (cached && !refresh) return cached;
    const { body: ds } = await http.request<NotionDataSource>({
      method: 'GET',
      path: `/v1/data_sources/${dataSourceId}`,
    });
    // Notion's date properties have no "include time" flag: look at the values of a first page.
    const props = Object.values(ds.properties);
    let withTime = new Set<string>();
    if (props.some((p) => p.type === 'date')) {
      const { body } = await http.request<QueryResponse>({
        method: 'POST',
        path: `/v1/data_sources/${dataSourceId}/query`,
        body: { page_size: 25 },
        idempotent: true,
      });
      withTime = new Set(
        props
          .filter((p) => p.type === 'date')
          .filter((p) =>
            body.results.some((page) => {
              const d = Object.values(page.properties).find((x) => x.id === p.id)?.date as
                | { start?: string }
                | null
                | undefined;
              return typeof d?.start === 'string' && d.start.length > 10;
            }),
          )
          .map((p) => p.id),
      );
    }
    const fields: NotionField[] = props.flatMap((p) => {
      const fieldType = canonicalType(p.type, withTime.has(p.id));
      if (!fieldType) return [];
      const options = p.select?.options ?? p.multi_select?.options ?? p.status?.options;
      return [
        {
          remoteId: p.id,
          name: p.name,
          notionType: p.type,
          fieldType,
          readOnly: isReadOnlyType(p.type),
          ...(options ? { choices: options.map((o) => o.name) } : {}),
          ...(p.relation?.data_source_id ? { relationDataSourceId: p.relation.data_source_id } : {}),
        },
      ];
    });
    const table: NotionTable = {
      id: ds.id,
      name: (ds.title ?? []).map((t) => t.plain_text).join(''),
      databaseId: ds.parent?.database_id ?? null,
      fields,
    };
    tables.set(dataSourceId, table);
    schemas.set(dataSourceId, ds);
    return table;
  }

  /** Every reference of a relation, past the 25 a page object lists. */
  async function allRelations(pageId: string, propertyId: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const { body } = await http.request<{
        results: { relation: { id: string } }[];
        next_cursor: string | null;
        has_more: boolean;
      }>({
        method: 'GET',
        path: `/v1/pages/${pageId}/properties/${encodeURIComponent(decodeURIComponent(propertyId))}`,
        query: { page_size: 100, ...(cursor ? { start_cursor: cursor } : {}) },
      });
      ids.push(...body.results.map((r) => r.relation.id));
      cursor = body.has_more ? (body.next_cursor ?? undefined) : undefined;
    } while (cursor);
    return ids;
  }

  async function toRecord(table: NotionTable, page: NotionPage): Promise<RecordData> {
    const byId = new Map(Object.values(page.properties).map((v) => [v.id, v]));
    const fields: Record<string, CanonicalValue> = {};
    for (const f of table.fields) {
      const v = byId.get(f.remoteId);
      // A page carries every property of its data source, empty ones too: one missing was deleted
      // since the schema was read. Left out (not read as emptied), so the runtime stops the pair.
      if (!v) continue;
      if (f.notionType === 'relation' && v.has_more === true) {
        fields[f.remoteId] = norm(f.fieldType, await allRelations(page.id, f.remoteId));
        continue;
      }
      fields[f.remoteId] = toCanonical(f, v);
    }
    return { id: page.id, fields };
  }

  function toCanonical(f: NotionField, v: Record<string, unknown>): CanonicalValue {
    const raw = v[f.notionType];
    switch (f.notionType) {
      case 'title':
        return norm('text', ((raw as NotionRichText[]) ?? []).map((t) => t.plain_text).join(''));
      case 'rich_text':
        return norm('rich_text', richTextToMarkdown((raw as NotionRichText[]) ?? []));
      case 'select':
      case 'status':
        return norm('single_select', (raw as { name?: string } | null)?.name ?? null);
      case 'multi_select':
        return norm(
          'multi_select',
          ((raw as { name: string }[]) ?? []).map((o) => o.name),
        );
      case 'date': {
        const start = (raw as { start?: string } | null)?.start ?? null;
        if (start === null) return null;
        return norm(f.fieldType, f.fieldType === 'date' ? start.slice(0, 10) : start);
      }
      case 'relation':
        return norm(
          'relations',
          ((raw as { id: string }[]) ?? []).map((r) => r.id),
        );
      case 'files':
        return norm(
          'attachments',
          (
            (raw as { name: string; type: string; file?: { url: string }; external?: { url: string } }[]) ??
            []
          ).map((file) => ({ url: file.external?.url ?? file.file?.url ?? '', filename: file.name })),
        );
      case 'unique_id': {
        const u = raw as { prefix: string | null; number: number | null } | null;
        return u?.number === null || u === null
          ? null
          : norm('text', u.prefix ? `${u.prefix}-${u.number}` : String(u.number));
      }
      case 'formula':
      case 'rollup': {
        const r = raw as { type: string; [k: string]: unknown } | null;
        const inner = r ? r[r.type] : null;
        return inner === null || inner === undefined ? null : norm('json', inner);
      }
      default:
        return norm(f.fieldType, raw ?? null);
    }
  }

  function norm(type: CanonicalFieldType, raw: unknown): CanonicalValue {
    const r = normalizeValue(type, raw);
    return r.ok ? r.value : null;
  }

  /** Canonical fields -> Notion property values (keyed by property id), within Notion's limits. */
  function toProperties(table: NotionTable, fields: Record<string, CanonicalValue>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      const f = table.fields.find((x) => x.remoteId === key || x.name === key);
      if (!f) throw invalid(`unknown property ${key}`);
      if (f.readOnly) continue;
      out[f.remoteId] = fromCanonical(f, value);
    }
    return out;
  }

  function fromCanonical(f: NotionField, value: CanonicalValue): unknown {
    try {
      switch (f.notionType) {
        case 'title':
          return { title: plainToRichText(value === null ? null : String(value)) };
        case 'rich_text':
          return {
            rich_text: markdownToRichText(value === null ? null : String(value)) as NotionRichTextInput[],
          };
        case 'number':
          return { number: value === null ? null : Number(value) };
        case 'checkbox':
          return { checkbox: value === true };
        case 'select':
        case 'status':
          return { [f.notionType]: value === null ? null : { name: String(value) } };
        case 'multi_select': {
          const names = (value as string[] | null) ?? [];
          if (names.length > NOTION_MULTI_SELECT_MAX)
            throw invalid(
              `${f.name}: ${names.length} options; Notion accepts at most ${NOTION_MULTI_SELECT_MAX}`,
            );
          return { multi_select: names.map((name) => ({ name })) };
        }
        case 'date':
          return { date: value === null ? null : { start: String(value) } };
        case 'url':
        case 'email':
        case 'phone_number':
          return { [f.notionType]: value === null ? null : String(value) };
        case 'relation': {
          const ids = (value as string[] | null) ?? [];
          if (ids.length > NOTION_RELATION_MAX)
            throw invalid(
              `${f.name}: ${ids.length} related pages; Notion accepts at most ${NOTION_RELATION_MAX}`,
            );
          return { relation: ids.map((id) => ({ id })) };
        }
        case 'files':
          return {
            files: ((value as { url: string; filename: string }[] | null) ?? []).map((a) => ({
              name: a.filename || a.url,
              external: { url: a.url },
            })),
          };
        default:
          throw invalid(`${f.name}: Notion ${f.notionType} properties cannot be written`);
      }
    } catch (e) {
      if (e instanceof RangeError) throw invalid(`${f.name} is too long for Notion: ${e.message}`);
      throw e;
    }
  }

  /**
   * Where a pass goes on after a query reached Notion's 10,000-result limit (has_more false, request
   * status incomplete), instead of ending the pass there and missing every page past it: a new
   * query from the last page's timestamp (on or after it: pages of that minute come again, and the
   * engine takes a page read twice as one). Null when the query was not limited. A limit met again
   * at the same timestamp (more than 10,000 pages in one minute) cannot be read past: said plainly.
   */
  function limitedContinuation(st: ReadCursor, body: QueryResponse): ReadCursor | null {
    if (body.request_status?.type !== 'incomplete') return null;
    const last = body.results.at(-1);
    if (!last) return null;
    const stuck = () =>
      new ConnectorError(
        'validation',
        'Notion query result limit reached within one minute',
        "More than 10,000 pages of this data source share one minute of Notion's timestamps, and Notion stops a query at 10,000 results, so Lockstep cannot read past them. Add a filter to the table pair or split the data source.",
      );
    if (st.m === 'changes') {
      const from = Date.parse(last.last_edited_time);
      if (from <= (st.from ?? (st.since as number))) throw stuck();
      return { ...st, c: undefined, from };
    }
    if (st.a !== undefined && Date.parse(last.created_time) <= Date.parse(st.a)) throw stuck();
    return { ...st, c: undefined, a: last.created_time };
  }

  async function read(
    dataSourceId: string,
    cursor: string | null,
    opts: { pageSize: number },
  ): Promise<ReadPage> {
    const table = await describe(dataSourceId);
    const st: ReadCursor = cursor ? decodeCursor(cursor) : { v: 1, m: 'scan' };
    const body: Record<string, unknown> = {
      page_size: Math.max(1, Math.min(NOTION_MAX_PAGE_SIZE, Math.floor(opts.pageSize))),
    };
    if (st.c) body.start_cursor = st.c;
    if (st.m === 'changes') {
      body.filter = {
        timestamp: 'last_edited_time',
        last_edited_time: { on_or_after: new Date(st.from ?? (st.since as number)).toISOString() },
      };
      body.sorts = [{ timestamp: 'last_edited_time', direction: 'ascending' }];
    } else {
      // In creation order, so a scan that meets the 10,000-result limit can go on from where it stopped.
      body.sorts = [{ timestamp: 'created_time', direction: 'ascending' }];
      if (st.a) body.filter = { timestamp: 'created_time', created_time: { on_or_after: st.a } };
    }
    let res: { body: QueryResponse; headers: Headers };
    try {
      res = await http.request<QueryResponse>({
        method: 'POST',
        path: `/v1/data_sources/${dataSourceId}/query`,
        body,
        idempotent: true,
      });
    } catch (e) {
      // An expired or foreign start_cursor: start the pass again rather than lose the position.
      if (st.c && e instanceof ConnectorError && e.code === 'validation' && /start_cursor/.test(e.message))
        throw new ConnectorError(
          'cursor_invalid',
          e.message,
          'The sync position expired; a full rescan will run.',
        );
      throw e;
    }
    const serverNow = Date.parse(res.headers.get('date') ?? '');
    const hw = st.hw ?? (Number.isNaN(serverNow) ? Date.now() : serverNow);
    const nextSince = Math.floor(hw / 60_000) * 60_000 - overlapMs;
    const gathered = { ...(st.next ?? {}) };
    const records: RecordData[] = [];
    for (const page of res.body.results) {
      const record = await toRecord(table, page);
      const hash = hashRecord(record.fields);
      const duplicate = st.m === 'changes' && st.seen?.[page.id] === hash;
      if (!duplicate) records.push(record);
      if (Date.parse(page.last_edited_time) >= nextSince) gathered[page.id] = hash;
    }
    const limited = limitedContinuation(st, res.body);
    const hasMore = limited !== null || (res.body.has_more && res.body.next_cursor !== null);
    // At the end of a pass of changes, pages trashed since its lower bound are deletes.
    const deletedIds = st.m === 'changes' && !hasMore ? await trashedSince(dataSourceId, st, gathered) : [];
    const next: ReadCursor = limited
      ? { ...limited, hw, next: capSeen(gathered) }
      : hasMore
        ? { ...st, c: res.body.next_cursor as string, hw, next: capSeen(gathered) }
        : { v: 1, m: 'changes', since: nextSince, seen: capSeen(gathered) };
    return {
      records,
      deletedIds,
      nextCursor: encodeCursor(next),
      hasMore,
      // Absence is evidence only when this one page holds the whole data source: the runtime reads a
      // page with scanComplete as the whole table, so the last page of a longer scan must not say so.
      scanComplete: st.m === 'scan' && !st.c && !st.a && !hasMore,
    };
  }

  /**
   * Pages of the data source moved to the trash (trashing moves last_edited_time) since the pass's
   * lower bound; ones already reported by the previous pass (inside the overlap) are not repeated.
   */
  async function trashedSince(
    dataSourceId: string,
    st: ReadCursor,
    gathered: Record<string, string>,
  ): Promise<string[]> {
    const ids: string[] = [];
    let start: string | undefined;
    do {
      const { body } = await http.request<QueryResponse>({
        method: 'POST',
        path: `/v1/data_sources/${dataSourceId}/query`,
        body: {
          page_size: NOTION_MAX_PAGE_SIZE,
          in_trash: true,
          filter: {
            timestamp: 'last_edited_time',
            last_edited_time: { on_or_after: new Date(st.since as number).toISOString() },
          },
          ...(start ? { start_cursor: start } : {}),
        },
        idempotent: true,
      });
      for (const page of body.results) {
        if (page.in_trash !== true && page.archived !== true) continue;
        gathered[page.id] = TRASHED;
        if (st.seen?.[page.id] !== TRASHED) ids.push(page.id);
      }
      start = body.has_more ? (body.next_cursor ?? undefined) : undefined;
    } while (start);
    return ids;
  }

  async function findBySyncId(
    table: NotionTable,
    propertyId: string,
    key: string,
  ): Promise<NotionPage | undefined> {
    const { body } = await http.request<QueryResponse>({
      method: 'POST',
      path: `/v1/data_sources/${table.id}/query`,
      body: { page_size: 1, filter: { property: propertyId, rich_text: { equals: key } } },
      idempotent: true,
    });
    return body.results[0];
  }

  async function writeOne(table: NotionTable, r: WriteRequest): Promise<WriteResult> {
    const syncName = options.syncIdProperty?.[table.id];
    const syncField = syncName
      ? table.fields.find((f) => f.remoteId === syncName || f.name === syncName)
      : undefined;
    if (r.kind === 'create') {
      const known = createdByKey.get(r.idempotencyKey);
      if (known) {
        // A retried create: answer with the page made the first time.
        const { body } = await http.request<NotionPage>({ method: 'GET', path: `/v1/pages/${known}` });
        return { ok: true, remoteId: body.id, postImage: await toRecord(table, body) };
      }
      const properties = toProperties(table, r.fields);
      if (syncField) {
        const existing = await findBySyncId(table, syncField.remoteId, r.idempotencyKey);
        if (existing) {
          createdByKey.set(r.idempotencyKey, existing.id);
          return { ok: true, remoteId: existing.id, postImage: await toRecord(table, existing) };
        }
        properties[syncField.remoteId] = { rich_text: plainToRichText(r.idempotencyKey) };
      }
      const { body } = await http.request<NotionPage>({
        method: 'POST',
        path: '/v1/pages',
        body: { parent: { type: 'data_source_id', data_source_id: table.id }, properties },
      });
      createdByKey.set(r.idempotencyKey, body.id);
      return { ok: true, remoteId: body.id, postImage: await toRecord(table, body) };
    }
    if (r.kind === 'update') {
      const properties = toProperties(table, r.fields);
      const { body } = await http.request<NotionPage>({
        method: 'PATCH',
        path: `/v1/pages/${r.remoteId}`,
        body: { properties },
        // Setting the same values again is harmless: let the client retry 5xx answers.
        idempotent: true,
      });
      return { ok: true, remoteId: body.id, postImage: await toRecord(table, body) };
    }
    try {
      await http.request({
        method: 'PATCH',
        path: `/v1/pages/${r.remoteId}`,
        body: { in_trash: true },
        idempotent: true,
      });
    } catch (e) {
      // Already gone (deleted for good, or never shared): the delete has happened.
      if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
    }
    return { ok: true, remoteId: r.remoteId, postImage: null };
  }

  async function write(dataSourceId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const table = await describe(dataSourceId);
    const results: WriteResult[] = [];
    // One page per request, in order; Notion has no batch endpoint.
    for (const r of requests) {
      try {
        results.push(await writeOne(table, r));
      } catch (e) {
        // Rate limits, outages and refused credentials concern the whole run: the runtime retries it.
        if (!itemLevel(e)) throw e;
        results.push(failure(e));
      }
    }
    return results;
  }

  async function fetchPages(dataSourceId: string, pageIds: string[]) {
    const table = await describe(dataSourceId);
    const records: RecordData[] = [];
    const deletedIds: string[] = [];
    for (const id of pageIds) {
      try {
        const { body } = await http.request<NotionPage>({ method: 'GET', path: `/v1/pages/${id}` });
        if (body.in_trash || body.archived) deletedIds.push(body.id);
        else if (body.parent?.data_source_id === undefined || body.parent.data_source_id === table.id)
          records.push(await toRecord(table, body));
      } catch (e) {
        if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
        deletedIds.push(id);
      }
    }
    return { records, deletedIds };
  }

  return {
    http,
    capabilities: {
      batchSize: NOTION_BATCH_SIZE,
      incrementalRead: true,
      deleteDetection: 'full_scan',
      webhooks: true,
      rateLimit: policy,
      recordsCarryEveryField: true,
    },
    async check() {
      const { body } = await http.request<{ id: string; name?: string | null }>({
        method: 'GET',
        path: '/v1/users/me',
      });
      return { botId: body.id, name: body.name ?? null };
    },
    async listDataSources() {
      const out: { id: string; name: string; databaseId: string | null }[] = [];
      let cursor: string | undefined;
      do {
        const { body } = await http.request<{
          results: NotionDataSource[];
          next_cursor: string | null;
          has_more: boolean;
        }>({
          method: 'POST',
          path: '/v1/search',
          body: {
            filter: { property: 'object', value: 'data_source' },
            page_size: 100,
            ...(cursor ? { start_cursor: cursor } : {}),
          },
          idempotent: true,
        });
        for (const ds of body.results)
          out.push({
            id: ds.id,
            name: (ds.title ?? []).map((t) => t.plain_text).join(''),
            databaseId: ds.parent?.database_id ?? null,
          });
        cursor = body.has_more ? (body.next_cursor ?? undefined) : undefined;
      } while (cursor);
      return out;
    },
    async dataSourcesOfDatabase(databaseId) {
      const { body } = await http.request<{ data_sources: { id: string; name: string }[] }>({
        method: 'GET',
        path: `/v1/databases/${databaseId}`,
      });
      return body.data_sources;
    },
    describe,
    async fieldsOf(dataSourceId) {
      return (await describe(dataSourceId)).fields;
    },
    fetchPages,
    verifyWebhook(headers, body) {
      const secret = options.webhookVerificationToken;
      if (!secret) return false;
      return verifyNotionSignature(secret, header(headers, 'x-notion-signature'), body);
    },
    parseWebhook: (_headers, body) => parseNotionWebhook(body),
    read,
    write,
  };
}

/** Ids-only events -> which data source (and page) to read again; the verification handshake gives []. */
export function parseNotionWebhook(body: string): NotionWebhookHint[] {
  let event: {
    type?: string;
    entity?: { id?: string; type?: string };
    data?: { parent?: { id?: string; type?: string; data_source_id?: string } };
  };
  try {
    event = JSON.parse(body);
  } catch {
    return [];
  }
  const type = event.type ?? '';
  const entity = event.entity;
  if (!entity?.id) return [];
  if (type.startsWith('page.')) {
    const ds = event.data?.parent?.data_source_id;
    // Pages outside a data source are not synced.
    if (!ds) return [];
    return [
      { tableRemoteId: ds, recordId: entity.id, ...(type === 'page.deleted' ? { deleted: true } : {}) },
    ];
  }
  if (type.startsWith('data_source.')) return [{ tableRemoteId: entity.id }];
  return [];
}
