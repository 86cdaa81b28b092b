/**
 * Salesforce's REST API on the SDK: one HttpClient per connection on the org's instance URL (the
 * token's `instance_url`), a bearer access token (renewed once through the refresh token when
 * Salesforce answers INVALID_SESSION_ID), the daily API allocation read from every response's
 * `Sforce-Limit-Info: api-usage=used/max`, and Salesforce's error bodies mapped to the SDK's codes:
 * - REST errors are a list `[{message, errorCode, fields}]`; sObject Collections give each record
 *   `{success, errors: [{statusCode, message, fields}]}`; OAuth endpoints `{error, error_description}`.
 * - The daily allocation used up is a 403 REQUEST_LIMIT_EXCEEDED (not a 429): a rate limit with a
 *   long wait (the allocation is a rolling 24 hours; the runtime retries the run later). Too many
 *   concurrent long requests use the same code with `ConcurrentPerOrgLongTxn`: a short wait.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ConnectorError, type ConnectorErrorCode } from '../sdk/connector';
import {
  defaultHttpErrorCode,
  HttpClient,
  type HttpRequest,
  type HttpResponse,
  parseRetryAfter,
} from '../sdk/http-client';
import {
  RateLimiter,
  type RateLimitPolicy,
  type RateLimitStore,
  rateLimitStoreCache,
} from '../sdk/rate-limiter';

/** The login host: OAuth's authorize and token endpoints. Data calls go to the token's instance URL. */
export const SALESFORCE_LOGIN_URL = 'https://login.salesforce.com';
export const SALESFORCE_API_VERSION = '62.0';
/** A 429 (proxies, the simulator) without Retry-After is waited out this long. */
export const SALESFORCE_RATE_LIMIT_WAIT_MS = 5_000;
/** The daily allocation is a rolling 24 hours: after REQUEST_LIMIT_EXCEEDED, try again in an hour. */
export const SALESFORCE_DAILY_LIMIT_WAIT_MS = 60 * 60_000;
/** Too many concurrent long-running requests (ConcurrentPerOrgLongTxn): a few seconds. */
export const SALESFORCE_CONCURRENCY_WAIT_MS = 5_000;

/**
 * Salesforce limits an org by its daily allocation, not per second; Lockstep paces itself gently so
 * that a sync does not crowd out the org's other integrations (25 requests per second per org).
 */
export const SALESFORCE_RATE_LIMIT: RateLimitPolicy = {
  scope: 'account',
  windows: [{ limit: 25, windowMs: 1_000 }],
};

export const salesforceRateLimitStore = rateLimitStoreCache();

/** One REST error (`errorCode`) or one record's error in a collection (`statusCode`). */
export type SalesforceError = {
  message?: string;
  errorCode?: string;
  statusCode?: string;
  fields?: string[];
  duplicateResult?: {
    matchResults?: { entityType?: string; matchRecords?: { record?: { Id?: string } }[] }[];
  };
};

export type ApiUsage = { used: number; max: number; remaining: number };

/** `api-usage=10018/100000` (Sforce-Limit-Info) as numbers; null when absent. */
export function parseLimitInfo(header: string | null): ApiUsage | null {
  const m = /api-usage=(\d+)\/(\d+)/i.exec(header ?? '');
  if (!m) return null;
  const used = Number(m[1]);
  const max = Number(m[2]);
  return { used, max, remaining: Math.max(0, max - used) };
}

export function salesforceUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Salesforce refused the session (expired or revoked). Sign in to Salesforce again.';
    case 'permission_denied':
      return `The Salesforce user may not do this${detail ? ` (${detail})` : ''}. Check the user's profile and permission sets (API Enabled, object and field access).`;
    case 'rate_limited':
      return 'Salesforce asked Lockstep to slow down; the sync will continue shortly.';
    case 'validation':
      return `Salesforce refused the value: ${detail || 'invalid'}`;
    case 'not_found':
      return 'The Salesforce record no longer exists (it may have been deleted or merged).';
    case 'cursor_invalid':
      return 'The Salesforce read position is too old (past the recycle bin window); a full rescan will run.';
    case 'version_conflict':
      return 'The Salesforce record changed at the same time; Lockstep compares it again.';
    default:
      return 'Salesforce is not answering right now; the sync will retry.';
  }
}

const AUTH = new Set(['INVALID_SESSION_ID', 'INVALID_AUTH_HEADER']);
const PERMISSION = new Set([
  'INSUFFICIENT_ACCESS',
  'INSUFFICIENT_ACCESS_OR_READONLY',
  'INSUFFICIENT_ACCESS_ON_CROSS_REFERENCE_ENTITY',
  'API_DISABLED_FOR_ORG',
  'API_CURRENTLY_DISABLED',
  'FUNCTIONALITY_NOT_ENABLED',
  'CANNOT_INSERT_UPDATE_ACTIVATE_ENTITY',
]);
const NOT_FOUND = new Set(['NOT_FOUND', 'ENTITY_IS_DELETED', 'INVALID_CROSS_REFERENCE_KEY']);
const CURSOR = new Set(['INVALID_QUERY_LOCATOR', 'INVALID_REPLICATION_DATE', 'QUERY_TIMEOUT_LOCATOR']);
const TRANSIENT = new Set(['UNABLE_TO_LOCK_ROW', 'SERVER_UNAVAILABLE', 'REQUEST_RUNNING_TOO_LONG']);

/** The code of one Salesforce error (a REST error or a record's error in a collection). */
export function salesforceErrorCode(e: SalesforceError, status = 400): ConnectorErrorCode {
  const code = e.errorCode ?? e.statusCode ?? '';
  if (AUTH.has(code)) return 'auth_invalid';
  if (code === 'REQUEST_LIMIT_EXCEEDED') return 'rate_limited';
  if (PERMISSION.has(code)) return 'permission_denied';
  if (NOT_FOUND.has(code)) return 'not_found';
  if (CURSOR.has(code)) return 'cursor_invalid';
  if (TRANSIENT.has(code)) return 'transient';
  if (code === 'PRECONDITION_FAILED' || status === 412) return 'version_conflict';
  if (code === 'MALFORMED_ID' && status === 404) return 'not_found';
  if (code !== '' && status < 500 && status !== 401 && status !== 403 && status !== 429) return 'validation';
  return defaultHttpErrorCode(status);
}

/** What a person can act on: the message, with the fields it names. */
export function salesforceErrorDetail(e: SalesforceError): string {
  const fields = (e.fields ?? []).filter((f) => f !== '');
  const message = e.message ?? e.errorCode ?? e.statusCode ?? 'invalid';
  return fields.length > 0 && !fields.every((f) => message.includes(f))
    ? `${message} (${fields.join(', ')})`
    : message;
}

/** One record's error (in a collection's results) as a ConnectorError. */
export function salesforceItemError(e: SalesforceError): ConnectorError {
  const code = salesforceErrorCode(e);
  const tag = e.statusCode ?? e.errorCode ?? 'ERROR';
  const detail = salesforceErrorDetail(e);
  return new ConnectorError(code, `Salesforce ${tag}: ${detail}`, salesforceUserMessage(code, detail));
}

/** Salesforce's error answers to SDK codes; REQUEST_LIMIT_EXCEEDED and 429s carry how long to wait. */
export function mapSalesforceError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; dailyLimitWaitMs?: number; now?: () => number } = {},
): ConnectorError {
  const list = Array.isArray(body) ? (body as SalesforceError[]) : [];
  const oauth = (!Array.isArray(body) && body && typeof body === 'object' ? body : {}) as {
    error?: string;
    error_description?: string;
    message?: string;
    errorCode?: string;
  };
  const first: SalesforceError = list[0] ?? {
    ...(oauth.errorCode ? { errorCode: oauth.errorCode } : {}),
    message:
      oauth.message ??
      oauth.error_description ??
      oauth.error ??
      (typeof body === 'string' ? body.slice(0, 300) : undefined),
  };
  let code = salesforceErrorCode(first, status);
  if (oauth.error === 'invalid_grant' || oauth.error === 'invalid_token') code = 'auth_invalid';
  if (status === 429) code = 'rate_limited';
  if (status >= 500 && code !== 'rate_limited') code = 'transient';
  const tag = first.errorCode ?? oauth.error ?? 'ERROR';
  const detail = salesforceErrorDetail(first);
  const technical = `Salesforce ${status} ${tag}: ${detail}`;
  if (code === 'rate_limited') {
    const message = first.message ?? '';
    const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null, options.now?.() ?? Date.now());
    if (first.errorCode === 'REQUEST_LIMIT_EXCEEDED' && !/Concurrent/i.test(message)) {
      const usage = parseLimitInfo(headers?.get('sforce-limit-info') ?? null);
      return new ConnectorError(
        'rate_limited',
        technical,
        `The Salesforce org used up its daily API allocation${
          usage ? ` (${usage.used} of ${usage.max} calls in the last 24 hours)` : ''
        }; the sync continues when calls are available again.`,
        options.dailyLimitWaitMs ?? SALESFORCE_DAILY_LIMIT_WAIT_MS,
      );
    }
    const wait =
      retryAfter ??
      (first.errorCode === 'REQUEST_LIMIT_EXCEEDED'
        ? SALESFORCE_CONCURRENCY_WAIT_MS
        : (options.rateLimitWaitMs ?? SALESFORCE_RATE_LIMIT_WAIT_MS));
    return new ConnectorError('rate_limited', technical, salesforceUserMessage('rate_limited'), wait);
  }
  return new ConnectorError(code, technical, salesforceUserMessage(code, detail));
}

export type SalesforceClientOptions = {
  /** The org's instance URL (the token's `instance_url`), e.g. https://acme.my.salesforce.com. */
  instanceUrl: string;
  /** An access token, or a function asked per attempt (renewed by OAuth refresh). */
  token: string | (() => string | Promise<string>);
  /** Called once after INVALID_SESSION_ID: renews the token (OAuth refresh); true means try again. */
  onAuthFailure?: () => Promise<boolean>;
  apiVersion?: string;
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per second per org Lockstep allows itself (25); 0 turns pacing off. */
  perSecond?: number;
  /** Wait after a 429 without Retry-After. */
  rateLimitWaitMs?: number;
  /** Wait after the daily allocation is used up (an hour). */
  dailyLimitWaitMs?: number;
  maxAttempts?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type SalesforceClient = {
  http: HttpClient;
  apiVersion: string;
  /** `/services/data/vXX.X` (paths other than /services/... and /id/... are joined to it). */
  dataPath: string;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
  /** The org's daily API allocation as the last response said (null before any call). */
  apiUsage(): ApiUsage | null;
};

export function createSalesforceClient(options: SalesforceClientOptions): SalesforceClient {
  const getToken = typeof options.token === 'function' ? options.token : () => options.token as string;
  const apiVersion = options.apiVersion ?? SALESFORCE_API_VERSION;
  const dataPath = `/services/data/v${apiVersion}`;
  const perSecond = options.perSecond ?? SALESFORCE_RATE_LIMIT.windows[0]!.limit;
  const store = options.rateLimitStore ?? salesforceRateLimitStore(options.pool);
  const limiter =
    perSecond > 0
      ? new RateLimiter({ scope: 'account', windows: [{ limit: perSecond, windowMs: 1_000 }] }, store, {
          ...(options.sleep ? { sleep: options.sleep } : {}),
        })
      : null;
  // The org's key is a hash of its instance URL: the budget is per org, whoever's token it is.
  const key = `salesforce:org:${createHash('sha256').update(options.instanceUrl).digest('hex').slice(0, 24)}`;
  let usage: ApiUsage | null = null;
  const note = (headers: Headers | undefined) => {
    const u = parseLimitInfo(headers?.get('sforce-limit-info') ?? null);
    if (u) usage = u;
  };
  const http = new HttpClient({
    baseUrl: options.instanceUrl,
    headers: async () => ({ authorization: `Bearer ${await getToken()}` }),
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? SALESFORCE_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 60_000,
    mapError: (status, body, headers) => {
      note(headers);
      return mapSalesforceError(status, body, headers, {
        ...(options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {}),
        ...(options.dailyLimitWaitMs !== undefined ? { dailyLimitWaitMs: options.dailyLimitWaitMs } : {}),
      });
    },
    acquirePermit: async (cost) => {
      if (limiter) await limiter.acquire(key, cost);
    },
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const send = async <T>(request: HttpRequest) => {
    const path =
      /^https?:\/\//i.test(request.path) || /^\/(services|id)\//.test(request.path)
        ? request.path
        : `${dataPath}${request.path.startsWith('/') ? '' : '/'}${request.path}`;
    const res = await http.request<T>({ ...request, path });
    note(res.headers);
    return res;
  };
  return {
    http,
    apiVersion,
    dataPath,
    apiUsage: () => usage,
    async request<T>(request: HttpRequest) {
      try {
        return await send<T>(request);
      } catch (error) {
        if (
          error instanceof ConnectorError &&
          error.code === 'auth_invalid' &&
          options.onAuthFailure &&
          (await options.onAuthFailure())
        ) {
          return send<T>(request);
        }
        throw error;
      }
    },
  };
}

export type SalesforceUserInfo = {
  user_id?: string;
  organization_id?: string;
  email?: string;
  name?: string;
  preferred_username?: string;
};

/** `GET /services/oauth2/userinfo`: who the token belongs to, and the org. */
export async function salesforceUserInfo(client: SalesforceClient): Promise<SalesforceUserInfo> {
  const { body } = await client.request<SalesforceUserInfo>({
    method: 'GET',
    path: '/services/oauth2/userinfo',
  });
  return body;
}

/** `GET /limits`: the org's daily API requests (Max and Remaining). */
export async function salesforceLimits(client: SalesforceClient): Promise<ApiUsage | null> {
  const { body } = await client.request<{ DailyApiRequests?: { Max?: number; Remaining?: number } }>({
    method: 'GET',
    path: '/limits',
  });
  const d = body?.DailyApiRequests;
  if (typeof d?.Max !== 'number' || typeof d.Remaining !== 'number') return client.apiUsage();
  return { used: d.Max - d.Remaining, max: d.Max, remaining: d.Remaining };
}

/** RFC 4180 CSV (Bulk API 2.0's format) into rows of strings. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const s = text.replace(/^\uFEFF/, '');
  while (i < s.length) {
    const ch = s[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (s[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += ch;
      i++;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      i++;
    } else if (ch === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (ch === '\n' || ch === '\r') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += ch === '\r' && s[i + 1] === '\n' ? 2 : 1;
    } else {
      field += ch;
      i++;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** CSV rows (the first the header) as objects by column name. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows
    .filter((r) => !(r.length === 1 && r[0] === ''))
    .map((r) => Object.fromEntries(header.map((h, k) => [h, r[k] ?? ''])));
}

const csvCell = (v: string) => (/[",\r\n]/.test(v) || v !== v.trim() ? `"${v.replace(/"/g, '""')}"` : v);

/** Rows as CSV with LF line endings (the header first). */
export function toCsv(columns: string[], rows: string[][]): string {
  return `${[columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
}
