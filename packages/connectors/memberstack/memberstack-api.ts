/**
 * Memberstack's Admin REST API on the SDK (https://admin.memberstack.com): one HttpClient per
 * connection, the app's secret key in `X-API-KEY` (test mode keys start `sk_sb_`, live mode keys
 * `sk_`; each mode is its own set of members).
 *
 * Limits: Memberstack documents 25 requests per second per app and answers 429 past it. The SDK's
 * RateLimiter keeps the connector under it per key (shared by every worker process through the
 * PostgreSQL store). A 429 was not processed: the client sends it again (even a create) after the
 * wait Memberstack gives (`Retry-After`, or the `X-RateLimit-Reset` of its window when it sends one),
 * or one second, the length of the window, when it says nothing.
 *
 * Errors: Memberstack answers `{ code, message }` (the Admin package rejects with that object; older
 * answers `{ error }`); 400 and 422 are refused values (but a 400 whose code says the secret key is
 * invalid is a refused key), 401 a refused key, 403 a key that may not do this, 404 a member that
 * does not exist, 409 an email another member holds.
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

export const MEMBERSTACK_API_URL = 'https://admin.memberstack.com';
/** Memberstack's documented limit: 25 requests per second. */
export const MEMBERSTACK_PER_SECOND = 25;
/** The wait after a 429 that names none: the one-second window. */
export const MEMBERSTACK_RATE_LIMIT_WAIT_MS = 1_000;

export const MEMBERSTACK_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: MEMBERSTACK_PER_SECOND, windowMs: 1_000 }],
};

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const memberstackRateLimitStore = rateLimitStoreCache();

/** Which of the app's two environments a secret key opens. */
export type MemberstackMode = 'test' | 'live';
export function memberstackKeyMode(secretKey: string | undefined): MemberstackMode | null {
  const key = (secretKey ?? '').trim();
  if (key.startsWith('sk_sb_')) return 'test';
  if (key.startsWith('sk_')) return 'live';
  return null;
}

export function memberstackUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Memberstack refused the secret key (wrong, or regenerated). Copy the secret key again from the Memberstack dashboard (Dev Tools > API keys) and enter it.';
    case 'permission_denied':
      return `Memberstack does not let this secret key do this${detail ? ` (${detail})` : ''}.`;
    case 'rate_limited':
      return 'Memberstack is rate limiting this app (25 requests a second); the sync will continue shortly.';
    case 'validation':
      return `Memberstack refused the value${detail ? `: ${detail}` : '.'}`;
    case 'not_found':
      return 'The Memberstack member no longer exists (it may have been deleted).';
    case 'cursor_invalid':
      return 'The Memberstack read position is no longer valid; a full rescan will run.';
    default:
      return 'Memberstack is not answering right now; the sync will retry.';
  }
}

/** The text and code of an error body, whatever its shape. */
export function memberstackErrorText(body: unknown): { message: string; code: string } {
  if (typeof body === 'string') return { message: body.slice(0, 300), code: '' };
  if (!body || typeof body !== 'object') return { message: '', code: '' };
  const b = body as { error?: unknown; message?: unknown; code?: unknown; errors?: unknown };
  let message = '';
  let code = typeof b.code === 'string' ? b.code : '';
  if (typeof b.error === 'string') message = b.error;
  else if (b.error && typeof b.error === 'object') {
    const e = b.error as { message?: unknown; code?: unknown };
    if (typeof e.message === 'string') message = e.message;
    if (!code && typeof e.code === 'string') code = e.code;
  }
  if (!message && typeof b.message === 'string') message = b.message;
  if (!message && Array.isArray(b.errors))
    message = b.errors
      .map((e) => (typeof e === 'string' ? e : ((e as { message?: string })?.message ?? '')))
      .filter(Boolean)
      .join('; ');
  return { message: message.slice(0, 500), code };
}

const numberHeader = (headers: Headers | undefined, name: string): number | null => {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
};

/**
 * How long a 429 asks to wait: `Retry-After` (seconds or a date), else `RateLimit-Reset` (seconds
 * until the window resets), else `X-RateLimit-Reset` (epoch seconds or milliseconds, or seconds from
 * now when small), else the one-second window.
 */
export function memberstackRateLimitWait(headers: Headers | undefined, now: number = Date.now()): number {
  const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null, now);
  if (retryAfter !== null) return Math.max(50, retryAfter);
  const resetIn = numberHeader(headers, 'ratelimit-reset');
  if (resetIn !== null && resetIn >= 0) return Math.min(60_000, Math.max(50, Math.ceil(resetIn * 1000)));
  const reset = numberHeader(headers, 'x-ratelimit-reset');
  if (reset !== null && reset > 0) {
    let wait: number;
    if (reset > 1e12) wait = reset - now;
    else if (reset > 1e9) wait = reset * 1000 - now;
    else wait = reset * 1000;
    return Math.min(60_000, Math.max(50, Math.ceil(wait)));
  }
  return MEMBERSTACK_RATE_LIMIT_WAIT_MS;
}

/** Memberstack's error answers to SDK codes, with text a person can act on. */
export function mapMemberstackError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; now?: number } = {},
): ConnectorError {
  const { message, code: appCode } = memberstackErrorText(body);
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  // A 409 is an email another member holds: a refused value, not a concurrent edit.
  if (status === 409 || status === 400 || status === 422) code = 'validation';
  // A missing or malformed key is answered 400 with the refused key's code: still a refused key.
  if (/invalid-secret-key|invalid-api-key|unauthori[sz]ed/i.test(appCode)) code = 'auth_invalid';
  // A write to a member that does not exist (any more) is a 400 saying so: the member is gone.
  else if (status === 400 && /no member with this identifier|member not found/i.test(message))
    code = 'not_found';
  const technical = `Memberstack ${status}${appCode ? ` ${appCode}` : ''}${message ? `: ${message}` : ''}`;
  if (code === 'rate_limited') {
    return new ConnectorError(
      'rate_limited',
      technical,
      memberstackUserMessage('rate_limited'),
      options.rateLimitWaitMs ?? memberstackRateLimitWait(headers, options.now),
    );
  }
  if (code === 'validation' || code === 'permission_denied')
    return new ConnectorError(code, technical, memberstackUserMessage(code, message));
  return new ConnectorError(code, technical, memberstackUserMessage(code));
}

export type MemberstackClientOptions = {
  baseUrl?: string;
  /** The app's secret key (`sk_sb_...` test mode, `sk_...` live). */
  secretKey: string;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per second per key the connector allows itself (25); 0 turns pacing off (tests). */
  perSecond?: number;
  /** Wait after a 429 when set (tests); otherwise what Memberstack's answer says. */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
};

export type MemberstackClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
};

export function createMemberstackClient(options: MemberstackClientOptions): MemberstackClient {
  const secretKey = options.secretKey.trim();
  if (!secretKey)
    throw new ConnectorError(
      'auth_invalid',
      'no Memberstack secret key',
      memberstackUserMessage('auth_invalid'),
    );
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const perSecond = options.perSecond ?? MEMBERSTACK_PER_SECOND;
  const store = options.rateLimitStore ?? memberstackRateLimitStore(options.pool);
  const limiter =
    perSecond > 0
      ? new RateLimiter(
          // Paced a little under the window (10%): grants a window apart can arrive closer together.
          { scope: 'token', windows: [{ limit: perSecond, windowMs: 1_100 }] },
          store,
          { sleep, maxWaitMs: 30_000 },
        )
      : null;
  // The key's rate-limit key is a hash: the key itself never goes into the shared store.
  const key = `memberstack:key:${createHash('sha256').update(secretKey).digest('hex').slice(0, 24)}`;
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? MEMBERSTACK_API_URL,
    headers: { 'x-api-key': secretKey },
    maxAttempts: options.maxAttempts ?? 8,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? MEMBERSTACK_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) =>
      mapMemberstackError(status, body, headers, {
        ...(options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {}),
        now: now(),
      }),
    acquirePermit: async (cost) => {
      await limiter?.acquire(key, cost);
    },
    sleep,
    now,
  });
  return { http, request: (request) => http.request(request) };
}

/** A member as the Admin API answers it. */
export type MemberstackMember = {
  id: string;
  auth?: { email?: string | null } | null;
  createdAt?: string | null;
  lastLogin?: string | null;
  verified?: boolean | null;
  customFields?: Record<string, unknown> | null;
  metaData?: Record<string, unknown> | null;
  json?: unknown;
  loginRedirect?: string | null;
  permissions?: string[] | null;
  planConnections?: MemberstackPlanConnection[] | null;
};

export type MemberstackPlanConnection = {
  id?: string;
  active?: boolean;
  status?: string | null;
  planId?: string | null;
  planName?: string | null;
  type?: string | null;
};

export type MemberstackPage = {
  data: MemberstackMember[] | null;
  hasNextPage?: boolean;
  endCursor?: number | string | null;
  totalCount?: number;
};

/** Members have the largest page Memberstack serves: 100 (larger limits are capped at 100). */
export const MEMBERSTACK_MAX_PAGE_SIZE = 100;

/** `GET /members?limit=&after=`: one page of members in their order of creation. */
export async function listMembers(
  client: MemberstackClient,
  after: string | null,
  limit: number,
): Promise<{ members: MemberstackMember[]; next: string | null; hasMore: boolean; total: number | null }> {
  const res = await client.request<MemberstackPage>({
    method: 'GET',
    path: '/members',
    query: {
      limit: Math.max(1, Math.min(limit, MEMBERSTACK_MAX_PAGE_SIZE)),
      ...(after ? { after } : {}),
      order: 'ASC',
    },
  });
  const body = res.body ?? { data: [] };
  const members = Array.isArray(body.data) ? body.data : [];
  const end = body.endCursor;
  const next = end === null || end === undefined || end === '' ? null : String(end);
  const hasMore = Boolean(body.hasNextPage) && next !== null && members.length > 0;
  return { members, next, hasMore, total: typeof body.totalCount === 'number' ? body.totalCount : null };
}

/** `GET /members/{id or email}`: the member, or null when there is none. */
export async function getMember(
  client: MemberstackClient,
  idOrEmail: string,
): Promise<MemberstackMember | null> {
  try {
    const res = await client.request<{ data: MemberstackMember | null }>({
      method: 'GET',
      path: `/members/${encodeURIComponent(idOrEmail)}`,
    });
    return res.body?.data ?? null;
  } catch (error) {
    if (error instanceof ConnectorError && error.code === 'not_found') return null;
    throw error;
  }
}
