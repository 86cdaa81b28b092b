/**
 * Attio's REST API (v2) on the SDK: one HttpClient per connection with a bearer token (an API key
 * made in the workspace settings, or a function giving the current OAuth access token), two
 * RateLimiters with Attio's documented limits (100 read and 25 write requests per second, per
 * token: GET and the query endpoints are reads; POST/PUT/PATCH/DELETE of records are writes), and
 * Attio's error body (`{status_code, type, code, message}`) mapped to the SDK's codes.
 *
 * A 429 carries `Retry-After` as an HTTP date ("usually the following second", Attio's rate limit
 * guide). The date is compared with the response's own `Date` header (both the server's clock), so
 * a local clock running ahead or behind does not turn the wait into zero or into minutes. Attio
 * says a 429 was not processed: the client sends it again after the wait, even a create.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ConnectorError, type ConnectorErrorCode } from '../sdk/connector';
import { defaultHttpErrorCode, HttpClient, type HttpRequest, type HttpResponse } from '../sdk/http-client';
import {
  RateLimiter,
  type RateLimitPolicy,
  type RateLimitStore,
  rateLimitStoreCache,
} from '../sdk/rate-limiter';

export const ATTIO_API_URL = 'https://api.attio.com';
/** Attio's documented limits: 100 read requests and 25 write requests per second. */
export const ATTIO_READS_PER_SECOND = 100;
export const ATTIO_WRITES_PER_SECOND = 25;
/** The wait after a 429 whose Retry-After cannot be read (Attio's limit resets each second). */
export const ATTIO_RATE_LIMIT_WAIT_MS = 1_000;

/** The write limit is the tighter one; the read window is enforced by the client as well. */
export const ATTIO_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: ATTIO_WRITES_PER_SECOND, windowMs: 1_000 }],
};

/** Windows paced a little longer than Attio's (5%): grants a window apart can arrive closer together. */
function padded(limit: number): RateLimitPolicy {
  return { scope: 'token', windows: [{ limit, windowMs: 1_050 }] };
}

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const attioRateLimitStore = rateLimitStoreCache();

export type AttioErrorBody = {
  status_code?: number;
  type?: string;
  code?: string;
  message?: string;
};

export function attioUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Attio refused the access token (revoked, the app uninstalled, or from another workspace). Sign in with Attio again, or enter a new API key from Workspace settings > Developers.';
    case 'permission_denied':
      return `The Attio API key lacks a scope${detail ? ` (${detail})` : ''}. Give it read-write access to records and read access to objects in Workspace settings > Developers.`;
    case 'rate_limited':
      return 'Attio is rate limiting this workspace; the sync will continue shortly.';
    case 'validation':
      return `Attio refused the value: ${detail || 'invalid value'}`;
    case 'not_found':
      return 'The Attio record no longer exists (it may have been deleted or merged).';
    case 'cursor_invalid':
      return 'The Attio read position is no longer valid; a full rescan will run.';
    default:
      return 'Attio is not answering right now; the sync will retry.';
  }
}

/**
 * How long a 429 asks to wait: its Retry-After (an HTTP date, or seconds) against the response's
 * Date header, else against the local clock; a small floor so a date in the current second is not
 * retried at once; the default when neither reads.
 */
export function attioRetryAfterMs(headers: Headers | undefined, now: number = Date.now()): number {
  const raw = headers?.get('retry-after')?.trim() ?? '';
  if (raw === '') return ATTIO_RATE_LIMIT_WAIT_MS;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.max(50, Math.round(Number(raw) * 1000));
  const until = Date.parse(raw);
  if (Number.isNaN(until)) return ATTIO_RATE_LIMIT_WAIT_MS;
  const serverNow = Date.parse(headers?.get('date') ?? '');
  // The server's own clock first (second precision: the wait is at most a second longer than needed).
  for (const base of [serverNow, now]) {
    if (Number.isNaN(base)) continue;
    const wait = until - base;
    if (wait >= 0 && wait <= 120_000) return Math.max(50, wait);
  }
  return ATTIO_RATE_LIMIT_WAIT_MS;
}

/** Attio's error bodies to SDK codes, with text a person can act on. */
export function mapAttioError(
  status: number,
  body: unknown,
  headers?: Headers,
  now?: number,
): ConnectorError {
  const b = (body && typeof body === 'object' ? body : {}) as AttioErrorBody;
  const message =
    typeof b.message === 'string' ? b.message : typeof body === 'string' ? body.slice(0, 300) : '';
  const type = b.type ?? '';
  const code_ = b.code ?? '';
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  if (status === 429 || type === 'rate_limit_error') code = 'rate_limited';
  // Attio's 403 (a scope the key lacks, billing) has type auth_error too: the key itself is fine.
  else if (status === 403) code = 'permission_denied';
  else if (status === 401 || type === 'auth_error') code = 'auth_invalid';
  else if (status === 404 || code_ === 'not_found') code = 'not_found';
  // A unique value already held by another record: not a concurrent edit, so not retried.
  else if (status === 409 || code_ === 'uniqueness_conflict') code = 'validation';
  else if (status === 400 || status === 422) code = 'validation';
  const technical = `Attio ${status} ${code_ || type || 'error'}${message ? `: ${message}` : ''}`;
  if (code === 'rate_limited')
    return new ConnectorError(code, technical, attioUserMessage(code), attioRetryAfterMs(headers, now));
  if (code === 'validation') {
    const user =
      status === 409 || code_ === 'uniqueness_conflict'
        ? `Attio already has a record with this unique value: ${message || 'duplicate'}`
        : attioUserMessage(code, message || code_);
    return new ConnectorError(code, technical, user);
  }
  if (code === 'permission_denied')
    return new ConnectorError(code, technical, attioUserMessage(code, message));
  return new ConnectorError(code, technical, attioUserMessage(code));
}

export type AttioClientOptions = {
  baseUrl?: string;
  /** An API key, or a function asked per attempt (an OAuth access token that may be renewed). */
  token: string | (() => string | Promise<string>);
  /** Called once after a 401: renews the token (OAuth refresh); true means try again. */
  onAuthFailure?: () => Promise<boolean>;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Read requests per second per token (100); 0 turns pacing off (tests). */
  readsPerSecond?: number;
  /** Write requests per second per token (25). */
  writesPerSecond?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type AttioClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
};

/** Reads: GET, and the POST endpoints that only query. */
export function isAttioRead(request: Pick<HttpRequest, 'method' | 'path'>): boolean {
  const method = request.method.toUpperCase();
  return method === 'GET' || (method === 'POST' && /\/(query|search)(\?|$)/.test(request.path));
}

export function createAttioClient(options: AttioClientOptions): AttioClient {
  const getToken = typeof options.token === 'function' ? options.token : () => options.token as string;
  const reads = options.readsPerSecond ?? ATTIO_READS_PER_SECOND;
  const writes = options.writesPerSecond ?? ATTIO_WRITES_PER_SECOND;
  const store = options.rateLimitStore ?? attioRateLimitStore(options.pool);
  const limiterOptions = { ...(options.sleep ? { sleep: options.sleep } : {}), maxWaitMs: 60_000 };
  const readLimiter = reads > 0 ? new RateLimiter(padded(reads), store, limiterOptions) : null;
  const writeLimiter = writes > 0 ? new RateLimiter(padded(writes), store, limiterOptions) : null;
  let last: { token: string; key: string } | null = null;
  // The token's key is a hash: the token itself never goes into the shared store.
  const keyOf = (token: string) => {
    if (last?.token !== token)
      last = { token, key: `attio:token:${createHash('sha256').update(token).digest('hex').slice(0, 24)}` };
    return last.key;
  };
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? ATTIO_API_URL,
    headers: async () => ({ authorization: `Bearer ${await getToken()}` }),
    maxAttempts: options.maxAttempts ?? 6,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: ATTIO_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) => mapAttioError(status, body, headers),
    acquirePermit: async (cost, request) => {
      const limiter = isAttioRead(request) ? readLimiter : writeLimiter;
      if (!limiter) return;
      const key = keyOf(await getToken());
      await limiter.acquire(`${key}:${limiter === readLimiter ? 'read' : 'write'}`, cost);
    },
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return {
    http,
    async request<T>(request: HttpRequest) {
      try {
        return await http.request<T>(request);
      } catch (error) {
        if (
          error instanceof ConnectorError &&
          error.code === 'auth_invalid' &&
          options.onAuthFailure &&
          (await options.onAuthFailure())
        ) {
          return http.request<T>(request);
        }
        throw error;
      }
    },
  };
}

export type AttioSelf = {
  active: boolean;
  workspace_id?: string;
  workspace_name?: string;
  workspace_slug?: string;
  scope?: string;
};

/**
 * `GET /v2/self`: the token and its workspace. Attio answers an unknown or revoked token with
 * `{active: false}` (200), which is a refused credential here.
 */
export async function attioSelf(client: AttioClient): Promise<AttioSelf & { workspace_id: string }> {
  const { body } = await client.request<AttioSelf>({ method: 'GET', path: '/v2/self' });
  if (!body?.active || !body.workspace_id) {
    throw new ConnectorError('auth_invalid', 'Attio token is not active', attioUserMessage('auth_invalid'));
  }
  return body as AttioSelf & { workspace_id: string };
}
