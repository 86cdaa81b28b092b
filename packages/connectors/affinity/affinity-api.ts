/**
 * Affinity's API on the SDK: one HttpClient per connection for both versions Affinity serves on the
 * same host, with the one API key:
 * - v2 (`/v2/...`, reads: persons, companies, opportunities, lists and their entries, with field
 *   data and cursor pagination) takes the key as a bearer token;
 * - v1 (the paths without a version: `/persons`, `/organizations`, `/opportunities`,
 *   `/field-values`, `/lists/{id}/list-entries`, the writes v2 does not have) takes it as the
 *   password of HTTP Basic auth (no user name).
 *
 * Limits (Affinity's rate-limit guide; both versions count against one pool):
 * - 900 requests per user per minute: the SDK's RateLimiter keeps the connector under it, per key,
 *   shared by every worker process through the PostgreSQL store;
 * - a monthly budget per account (by plan: 100k on Scale and Advanced, none on Essentials,
 *   unlimited on Enterprise) and a limit on concurrent requests.
 * Every answer carries `x-ratelimit-limit-user(-remaining|-reset)` and
 * `x-ratelimit-limit-org(-remaining|-reset)` (reset in seconds). A 429 is waited out by those: the
 * user window's reset when it is used up; when the month's budget is, the wait until its reset goes
 * to the runtime as rate_limited (not slept through); a 429 with neither used up (the concurrency
 * limit) waits a second or `Retry-After`. A 429 was not processed: the client sends it again after
 * the wait, even a create. When an answer says the user window is used up, the next request waits
 * for its reset instead of drawing a 429.
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

export const AFFINITY_API_URL = 'https://api.affinity.co';
/** Affinity's documented per-user limit: 900 requests a minute (both API versions together). */
export const AFFINITY_PER_MINUTE = 900;
export const AFFINITY_MINUTE_MS = 60_000;
/** The wait after a 429 that says nothing of its windows (the account's concurrency limit). */
export const AFFINITY_RATE_LIMIT_WAIT_MS = 1_000;

export const AFFINITY_RATE_LIMIT: RateLimitPolicy = {
  scope: 'user',
  windows: [{ limit: AFFINITY_PER_MINUTE, windowMs: AFFINITY_MINUTE_MS }],
};

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const affinityRateLimitStore = rateLimitStoreCache();

export function affinityUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Affinity refused the API key (wrong, regenerated or revoked). Generate a key in Affinity: Settings > API, and enter it again.';
    case 'permission_denied':
      return `The Affinity user of this API key is not allowed to do this${detail ? ` (${detail})` : ''}. Ask an Affinity admin for access to the lists or records.`;
    case 'rate_limited':
      return 'Affinity is rate limiting this API key; the sync will continue shortly.';
    case 'validation':
      return `Affinity refused the value${detail ? `: ${detail}` : '.'}`;
    case 'not_found':
      return 'The Affinity record no longer exists (it may have been deleted or merged).';
    case 'cursor_invalid':
      return 'The Affinity read position is no longer valid; a full rescan will run.';
    default:
      return 'Affinity is not answering right now; the sync will retry.';
  }
}

export const numberHeader = (headers: Headers | undefined, name: string): number | null => {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
};

/** What a 429's headers say: which window is used up and how long until it resets. */
export function affinityRateLimitWait(
  headers: Headers | undefined,
  now: number = Date.now(),
): { wait: number; monthly: boolean } {
  const orgRemaining = numberHeader(headers, 'x-ratelimit-limit-org-remaining');
  const orgReset = numberHeader(headers, 'x-ratelimit-limit-org-reset');
  if (orgRemaining !== null && orgRemaining <= 0 && orgReset !== null)
    return { wait: Math.max(1_000, Math.ceil(orgReset * 1000)), monthly: true };
  const userRemaining = numberHeader(headers, 'x-ratelimit-limit-user-remaining');
  const userReset = numberHeader(headers, 'x-ratelimit-limit-user-reset');
  if (userRemaining !== null && userRemaining <= 0 && userReset !== null)
    return { wait: Math.max(50, Math.ceil(userReset * 1000)), monthly: false };
  const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null, now);
  return { wait: retryAfter ?? AFFINITY_RATE_LIMIT_WAIT_MS, monthly: false };
}

/** The message in either version's error body (v2 `{errors: [{code, message}]}`, v1 `{errors: [...]}`). */
export function affinityErrorText(body: unknown): { message: string; code: string } {
  if (typeof body === 'string') return { message: body.slice(0, 300), code: '' };
  if (!body || typeof body !== 'object') return { message: '', code: '' };
  const b = body as { errors?: unknown; message?: unknown; error?: unknown; code?: unknown };
  const parts: string[] = [];
  let code = typeof b.code === 'string' ? b.code : '';
  if (Array.isArray(b.errors)) {
    for (const e of b.errors) {
      if (typeof e === 'string') parts.push(e);
      else if (e && typeof e === 'object') {
        const x = e as { message?: unknown; code?: unknown; param?: unknown };
        if (typeof x.code === 'string' && !code) code = x.code;
        if (typeof x.message === 'string')
          parts.push(typeof x.param === 'string' && x.param ? `${x.param}: ${x.message}` : x.message);
      }
    }
  }
  if (parts.length === 0 && typeof b.message === 'string') parts.push(b.message);
  if (parts.length === 0 && typeof b.error === 'string') parts.push(b.error);
  return { message: parts.join('; ').slice(0, 500), code };
}

/** Affinity's error answers to SDK codes, with text a person can act on. */
export function mapAffinityError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; now?: number } = {},
): ConnectorError {
  const { message, code: appCode } = affinityErrorText(body);
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  if (status === 429 || appCode === 'rate-limit') code = 'rate_limited';
  else if (status === 401 || appCode === 'authentication') code = 'auth_invalid';
  else if (status === 403 || appCode === 'authorization') code = 'permission_denied';
  else if (status === 404 || appCode === 'not-found') code = 'not_found';
  // 409/422: a value Affinity refuses (an email another person holds, a bad option): not retried.
  else if (status === 400 || status === 409 || status === 422 || appCode === 'validation')
    code = 'validation';
  const technical = `Affinity ${status}${appCode ? ` ${appCode}` : ''}${message ? `: ${message}` : ''}`;
  if (code === 'rate_limited') {
    const { wait, monthly } = affinityRateLimitWait(headers, options.now);
    return new ConnectorError(
      'rate_limited',
      technical,
      monthly
        ? 'The Affinity account used up its monthly API budget; the sync continues when it resets (the first of the month).'
        : affinityUserMessage('rate_limited'),
      monthly ? wait : (options.rateLimitWaitMs ?? wait),
    );
  }
  if (code === 'validation' || code === 'permission_denied')
    return new ConnectorError(code, technical, affinityUserMessage(code, message));
  return new ConnectorError(code, technical, affinityUserMessage(code));
}

export type AffinityClientOptions = {
  baseUrl?: string;
  /** The user's API key: bearer token for v2, Basic auth password for v1. */
  apiKey: string;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per minute per key the connector allows itself (900); 0 turns pacing off (tests). */
  perMinute?: number;
  /** Wait after a 429 of the minute window when set (tests); otherwise Affinity's headers. */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
};

export type AffinityClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
  /** Waits taken because Affinity's headers said the minute was used up (tests). */
  readonly headerWaits: number;
};

/** v2 paths take a bearer token; every other path is v1 (Basic auth, the key as password). */
export const isV2 = (path: string) => /^(https?:\/\/[^/]+)?\/v2\//.test(path);

/** Per key, per process: when the last answer said the minute was used up, until its reset. */
const minuteGates = new Map<string, number>();

export function createAffinityClient(options: AffinityClientOptions): AffinityClient {
  const apiKey = options.apiKey.trim();
  if (!apiKey)
    throw new ConnectorError('auth_invalid', 'no Affinity API key', affinityUserMessage('auth_invalid'));
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const perMinute = options.perMinute ?? AFFINITY_PER_MINUTE;
  const store = options.rateLimitStore ?? affinityRateLimitStore(options.pool);
  const limiter =
    perMinute > 0
      ? new RateLimiter(
          // Paced a little under the window (2%): grants a window apart can arrive closer together.
          { scope: 'user', windows: [{ limit: perMinute, windowMs: Math.ceil(AFFINITY_MINUTE_MS * 1.02) }] },
          store,
          { sleep, maxWaitMs: 120_000 },
        )
      : null;
  // The key's rate-limit key is a hash: the key itself never goes into the shared store.
  const key = `affinity:key:${createHash('sha256').update(apiKey).digest('hex').slice(0, 24)}`;
  // Affinity's own count is per server: a simulator's window is not the real one's.
  const gate = `${options.baseUrl ?? AFFINITY_API_URL}|${key}`;
  const basic = `Basic ${Buffer.from(`:${apiKey}`).toString('base64')}`;
  const state = { headerWaits: 0 };
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? AFFINITY_API_URL,
    maxAttempts: options.maxAttempts ?? 6,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: AFFINITY_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 65_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) => {
      noteWindow(headers);
      return mapAffinityError(status, body, headers, {
        ...(options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {}),
        now: now(),
      });
    },
    acquirePermit: async (cost) => {
      const wait = (minuteGates.get(gate) ?? 0) - now();
      if (wait > 0) {
        state.headerWaits++;
        await sleep(Math.min(wait, AFFINITY_MINUTE_MS));
      }
      await limiter?.acquire(key, cost);
    },
    sleep,
    now,
  });
  /** Affinity's own count of the minute: used up means the next request waits for its reset. */
  function noteWindow(headers: Headers | undefined) {
    const remaining = numberHeader(headers, 'x-ratelimit-limit-user-remaining');
    const reset = numberHeader(headers, 'x-ratelimit-limit-user-reset');
    if (remaining !== null && remaining <= 0 && reset !== null && reset > 0) {
      const until = now() + (options.rateLimitWaitMs ?? Math.min(reset * 1000, AFFINITY_MINUTE_MS));
      minuteGates.set(gate, Math.max(minuteGates.get(gate) ?? 0, until));
    }
  }
  return {
    http,
    get headerWaits() {
      return state.headerWaits;
    },
    async request<T>(request: HttpRequest) {
      const authorization = isV2(request.path) ? `Bearer ${apiKey}` : basic;
      const res = await http.request<T>({
        ...request,
        headers: { ...request.headers, authorization },
      });
      noteWindow(res.headers);
      return res;
    },
  };
}

export type AffinityWhoAmI = {
  tenant: { id: number; name: string; subdomain?: string };
  user: { id: number; firstName?: string; lastName?: string | null; emailAddress?: string };
  grant?: { type?: string; scopes?: string[]; createdAt?: string };
};

/** `GET /v2/auth/whoami`: the key's user and its Affinity account (tenant): a cheap authenticated call. */
export async function affinityWhoAmI(client: AffinityClient): Promise<AffinityWhoAmI> {
  const { body } = await client.request<AffinityWhoAmI>({ method: 'GET', path: '/v2/auth/whoami' });
  if (!body?.tenant) {
    throw new ConnectorError(
      'transient',
      'Affinity whoami answered without a tenant',
      affinityUserMessage('transient'),
    );
  }
  return body;
}
