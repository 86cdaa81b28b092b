/**
 * Pipedrive's API on the SDK: one HttpClient per connection, authenticated with the company's API
 * token (the `x-api-token` header, so the token never appears in a URL) or an OAuth access token
 * (a bearer token), and paced under Pipedrive's limits:
 * - the burst limit: a rolling 2-second window per token (20 requests on the smallest plan with an
 *   API token; more on larger plans and for OAuth apps). The SDK's RateLimiter keeps the connector
 *   under a configured window, shared by every worker process through the PostgreSQL store; on top
 *   of it every answer's `x-ratelimit-remaining` / `x-ratelimit-reset` are read, and when Pipedrive
 *   says the window is used up (by this or any other client of the token) the next request waits
 *   the reset out instead of drawing a 429.
 * - a 429 is waited out by Pipedrive's own signal: `Retry-After`, else `x-ratelimit-reset`, else a
 *   whole window (2 s). The HTTP client retries it (a refused request was not processed, so even a
 *   create is safe to send again).
 * - the daily token budget (token-based rate limiting): a 429 for the day is not slept through; it
 *   goes to the runtime as rate_limited with the wait until the budget resets (midnight UTC).
 * Pipedrive's error body (`{success: false, error, error_info, errorCode}`) is mapped to the SDK's
 * codes with text for users.
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

export const PIPEDRIVE_API_URL = 'https://api.pipedrive.com';

/** The burst window: Pipedrive counts requests per token in a rolling 2 s. */
export const PIPEDRIVE_BURST_WINDOW_MS = 2_000;
/** The smallest plan's burst limit for API-token requests (20 per 2 s); larger plans allow more. */
export const PIPEDRIVE_BURST_LIMIT = 20;

export const PIPEDRIVE_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: PIPEDRIVE_BURST_LIMIT, windowMs: PIPEDRIVE_BURST_WINDOW_MS }],
};

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const pipedriveRateLimitStore = rateLimitStoreCache();

export type PipedriveErrorBody = {
  success?: boolean;
  error?: string;
  error_info?: string;
  errorCode?: number | string;
  code?: string;
  data?: unknown;
};

export function pipedriveUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Pipedrive refused the API token (wrong, regenerated or revoked). Sign in with Pipedrive again, or copy the current API token from Pipedrive: Settings > Personal preferences > API.';
    case 'permission_denied':
      return `The Pipedrive user lacks a permission for this${detail ? ` (${detail})` : ''}. Ask a Pipedrive admin to grant it.`;
    case 'rate_limited':
      return 'Pipedrive is rate limiting this account; the sync will continue shortly.';
    case 'validation':
      return `Pipedrive refused the value${detail ? `: ${detail}` : '.'}`;
    case 'not_found':
      return 'The Pipedrive record no longer exists (it may have been deleted).';
    case 'cursor_invalid':
      return 'The Pipedrive read position expired; a full rescan will run.';
    default:
      return 'Pipedrive is not answering right now; the sync will retry.';
  }
}

/** Milliseconds until the next midnight UTC, when Pipedrive's daily token budget resets. */
export function untilMidnightUtc(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - now;
}

const numberHeader = (headers: Headers | undefined, name: string): number | null => {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
};

/** Whether an answer says the daily budget (not the 2 s burst) is spent. */
function dailyBudgetSpent(headers: Headers | undefined, message: string): boolean {
  if (/daily|per day|budget/i.test(message)) return true;
  if (!headers) return false;
  for (const [name, value] of headers) {
    if (/^x-daily-.*(left|remaining)$/i.test(name) && Number(value) <= 0) return true;
  }
  return false;
}

/** Pipedrive's error bodies to SDK codes; a 429 carries how long Pipedrive says to wait. */
export function mapPipedriveError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; now?: () => number } = {},
): ConnectorError {
  const b = (body && typeof body === 'object' ? body : {}) as PipedriveErrorBody;
  const message = typeof b.error === 'string' ? b.error : typeof body === 'string' ? body.slice(0, 300) : '';
  const info = typeof b.error_info === 'string' ? b.error_info : '';
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  // Pipedrive answers a value it refuses with 400; a missing or deleted entity with 404 (410 for
  // one deleted past recovery).
  if (status === 402) code = 'permission_denied';
  const technical = `Pipedrive ${status}${message ? `: ${message}` : ''}${info ? ` (${info})` : ''}`;
  if (code === 'rate_limited') {
    const now = options.now?.() ?? Date.now();
    if (dailyBudgetSpent(headers, `${message} ${info}`)) {
      return new ConnectorError(
        'rate_limited',
        technical,
        'The Pipedrive account used up its daily API budget; the sync continues after midnight UTC.',
        untilMidnightUtc(now),
      );
    }
    const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null, now);
    const reset = numberHeader(headers, 'x-ratelimit-reset');
    const wait =
      options.rateLimitWaitMs ??
      retryAfter ??
      (reset !== null ? Math.max(0, Math.ceil(reset * 1000)) : PIPEDRIVE_BURST_WINDOW_MS);
    return new ConnectorError('rate_limited', technical, pipedriveUserMessage('rate_limited'), wait);
  }
  if (code === 'validation') {
    return new ConnectorError(code, technical, pipedriveUserMessage(code, message || info));
  }
  if (code === 'permission_denied') {
    return new ConnectorError(code, technical, pipedriveUserMessage(code, message));
  }
  return new ConnectorError(code, technical, pipedriveUserMessage(code));
}

export type PipedriveClientOptions = {
  baseUrl?: string;
  /** The company's API token, sent as `x-api-token`. */
  apiToken?: string;
  /** An OAuth access token (or a function giving the current one), sent as a bearer token. */
  accessToken?: string | (() => string | Promise<string>);
  /** Called once after a 401 with the token that was sent: renews the OAuth token; true means try again. */
  onAuthFailure?: (refusedToken: string) => Promise<boolean>;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per 2 s per token the connector allows itself (20, the smallest plan); 0 turns pacing off. */
  perTwoSeconds?: number;
  /** Wait after a 429 when set (tests); otherwise Pipedrive's Retry-After / x-ratelimit-reset. */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
};

export type PipedriveClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
  /** Waits taken because Pipedrive's headers said the window was used up (tests, benchmarks). */
  headerWaits: number;
};

/**
 * What the last answers said of a token's 2 s window, per process: when `x-ratelimit-remaining`
 * reaches 0, requests wait until `x-ratelimit-reset` has passed.
 */
const windowGates = new Map<string, number>();

export function createPipedriveClient(options: PipedriveClientOptions): PipedriveClient {
  const bearer = options.accessToken;
  const apiToken = options.apiToken?.trim();
  if (!apiToken && !bearer) {
    throw new ConnectorError('auth_invalid', 'no Pipedrive token', pipedriveUserMessage('auth_invalid'));
  }
  const getBearer = typeof bearer === 'function' ? bearer : () => bearer as string;
  const credential = async () => (apiToken ? apiToken : await getBearer());
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const perTwo = options.perTwoSeconds ?? PIPEDRIVE_BURST_LIMIT;
  const store = options.rateLimitStore ?? pipedriveRateLimitStore(options.pool);
  // Paced a little slower than the window (5%): grants a window apart can arrive closer together.
  const burst =
    perTwo > 0
      ? new RateLimiter(
          {
            scope: 'token',
            windows: [{ limit: perTwo, windowMs: Math.ceil(PIPEDRIVE_BURST_WINDOW_MS * 1.05) }],
          },
          store,
          { sleep, maxWaitMs: 120_000 },
        )
      : null;
  let last: { token: string; key: string } | null = null;
  // The token's key is a hash: the token itself never goes into the shared store.
  const keyOf = (token: string) => {
    if (last?.token !== token)
      last = {
        token,
        key: `pipedrive:token:${createHash('sha256').update(token).digest('hex').slice(0, 24)}`,
      };
    return last.key;
  };
  const state = { headerWaits: 0 };
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? PIPEDRIVE_API_URL,
    headers: async (): Promise<Record<string, string>> =>
      apiToken ? { 'x-api-token': apiToken } : { authorization: `Bearer ${await getBearer()}` },
    maxAttempts: options.maxAttempts ?? 6,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? PIPEDRIVE_BURST_WINDOW_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) => {
      noteWindow(headers);
      return mapPipedriveError(status, body, headers, {
        ...(options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {}),
        now,
      });
    },
    acquirePermit: async (cost) => {
      const key = keyOf(await credential());
      currentKey = key;
      const until = windowGates.get(key) ?? 0;
      const wait = until - now();
      if (wait > 0) {
        state.headerWaits++;
        await sleep(Math.min(wait, PIPEDRIVE_BURST_WINDOW_MS * 2));
      }
      await burst?.acquire(key, cost);
    },
    sleep,
    now,
  });
  let currentKey: string | null = null;
  /** Pipedrive's own count of the window: used up means the next request waits for its reset. */
  function noteWindow(headers: Headers | undefined) {
    if (!currentKey || !headers) return;
    const remaining = numberHeader(headers, 'x-ratelimit-remaining');
    const reset = numberHeader(headers, 'x-ratelimit-reset');
    if (remaining !== null && remaining <= 0 && reset !== null && reset > 0) {
      const until =
        now() + (options.rateLimitWaitMs ?? Math.min(reset * 1000, PIPEDRIVE_BURST_WINDOW_MS * 2));
      windowGates.set(currentKey, Math.max(windowGates.get(currentKey) ?? 0, until));
    }
  }
  async function send<T>(request: HttpRequest): Promise<HttpResponse<T>> {
    const res = await http.request<T>(request);
    noteWindow(res.headers);
    return res;
  }
  return {
    http,
    get headerWaits() {
      return state.headerWaits;
    },
    async request<T>(request: HttpRequest) {
      const sent = !apiToken && options.onAuthFailure ? await getBearer() : '';
      try {
        return await send<T>(request);
      } catch (error) {
        if (
          error instanceof ConnectorError &&
          error.code === 'auth_invalid' &&
          !apiToken &&
          options.onAuthFailure &&
          (await options.onAuthFailure(sent))
        ) {
          return send<T>(request);
        }
        throw error;
      }
    },
  };
}

export type PipedriveUser = {
  id: number;
  name?: string;
  email?: string;
  company_id: number;
  company_name?: string;
  company_domain?: string;
};

/** `GET /api/v1/users/me`: the user the token belongs to and its company (the one base). */
export async function pipedriveCurrentUser(client: PipedriveClient): Promise<PipedriveUser> {
  const { body } = await client.request<{ data: PipedriveUser }>({ method: 'GET', path: '/api/v1/users/me' });
  if (!body?.data) {
    throw new ConnectorError(
      'transient',
      'Pipedrive /users/me answered without data',
      pipedriveUserMessage('transient'),
    );
  }
  return body.data;
}
