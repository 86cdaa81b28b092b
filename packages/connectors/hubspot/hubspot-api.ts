/**
 * HubSpot's CRM API on the SDK: one HttpClient per connection with a bearer token (a private app
 * token, or a function giving the current OAuth access token), the SDK's RateLimiter with HubSpot's
 * documented limits (100 requests per rolling 10 s per token by default, search 5 per second), 429s
 * waited out (HubSpot sends no Retry-After on its ten-secondly limit: the client waits out the window;
 * the secondly search limit a second; the daily limit goes to the runtime), and HubSpot's error body
 * (`{status, message, category, correlationId, errors[]}`) mapped to the SDK's codes with text for users.
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

export const HUBSPOT_API_URL = 'https://api.hubapi.com';

/** HubSpot's documented burst limit for private apps on Free/Starter: 100 requests per 10 s per token. */
export const HUBSPOT_PER_TEN_SECONDS = 100;
/** The search endpoints: 5 requests per second per token (on top of the burst limit). */
export const HUBSPOT_SEARCH_PER_SECOND = 5;
/** The ten-secondly window: a 429 on it is waited out this long (HubSpot sends no Retry-After). */
export const HUBSPOT_RATE_LIMIT_WAIT_MS = 10_000;

export const HUBSPOT_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: HUBSPOT_PER_TEN_SECONDS, windowMs: 10_000 }],
};

/** Windows paced a little longer than HubSpot's (5%): grants a window apart can arrive closer together. */
function padded(limit: number, windowMs: number): RateLimitPolicy {
  return { scope: 'token', windows: [{ limit, windowMs: Math.ceil(windowMs * 1.05) }] };
}

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const hubspotRateLimitStore = rateLimitStoreCache();

export type HubSpotErrorBody = {
  status?: string;
  message?: string;
  category?: string;
  errorType?: string;
  policyName?: string;
  correlationId?: string;
  context?: Record<string, unknown>;
  errors?: { message?: string; context?: Record<string, unknown>; code?: string }[];
};

export function hubspotUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'HubSpot refused the access token (revoked or expired). Sign in with HubSpot again, or enter a new private app token.';
    case 'permission_denied':
      return `The HubSpot private app lacks a scope${detail ? ` (${detail})` : ''}. Add it in HubSpot's private app settings.`;
    case 'rate_limited':
      return 'HubSpot is rate limiting this account; the sync will continue shortly.';
    case 'validation':
      return `HubSpot refused the value: ${detail}`;
    case 'not_found':
      return 'The HubSpot record no longer exists (it may have been deleted or merged).';
    case 'cursor_invalid':
      return 'The HubSpot read position expired; a full rescan will run.';
    default:
      return 'HubSpot is not answering right now; the sync will retry.';
  }
}

/**
 * `Property values were not valid: [{"isValid":false,"message":"...","name":"..."}]` as
 * `name: message; ...`, the text a person can act on; other messages as they are.
 */
export function hubspotValidationDetail(message: string): string {
  const at = message.indexOf('[');
  if (message.startsWith('Property values were not valid') && at >= 0) {
    try {
      const list = JSON.parse(message.slice(at)) as { name?: string; message?: string }[];
      const text = list.map((e) => `${e.name ?? '?'}: ${e.message ?? 'invalid'}`).join('; ');
      if (text) return text;
    } catch {
      // fall through
    }
  }
  return message;
}

/** The id HubSpot names in a duplicate contact's 409 (`Contact already exists. Existing ID: 123`). */
export function existingIdOf(message: string | undefined): string | undefined {
  return /Existing ID:\s*(\d+)/i.exec(message ?? '')?.[1];
}

/** Milliseconds until the next midnight UTC (when the simulator and, roughly, HubSpot reset the daily limit). */
function untilMidnightUtc(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - now;
}

/** HubSpot's error bodies to SDK codes; 429s carry how long to wait by the policy that refused. */
export function mapHubSpotError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; now?: () => number } = {},
): ConnectorError {
  const b = (body && typeof body === 'object' ? body : {}) as HubSpotErrorBody;
  const category = b.category ?? b.errorType ?? '';
  const message =
    typeof b.message === 'string' ? b.message : typeof body === 'string' ? body.slice(0, 300) : '';
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  if (category === 'INVALID_AUTHENTICATION' || category === 'EXPIRED_AUTHENTICATION') code = 'auth_invalid';
  else if (category === 'MISSING_SCOPES') code = 'permission_denied';
  else if (category === 'RATE_LIMIT' || status === 429) code = 'rate_limited';
  else if (category === 'OBJECT_NOT_FOUND') code = 'not_found';
  else if (category === 'VALIDATION_ERROR') code = 'validation';
  // A unique value already taken (a contact's email): not a concurrent edit, so not retryable.
  else if (category === 'CONFLICT' || category === 'OBJECT_ALREADY_EXISTS') code = 'validation';
  const technical = `HubSpot ${status} ${category || 'ERROR'}${message ? `: ${message}` : ''}${
    b.correlationId ? ` (correlationId ${b.correlationId})` : ''
  }`;
  if (code === 'rate_limited') {
    const policy = b.policyName ?? '';
    const now = options.now?.() ?? Date.now();
    let wait: number;
    if (policy === 'SECONDLY' || /secondly limit/i.test(message)) wait = 1_000;
    else if (policy === 'DAILY' || /daily limit/i.test(message)) wait = untilMidnightUtc(now);
    else {
      const interval = Number(headers?.get('x-hubspot-ratelimit-interval-milliseconds') ?? Number.NaN);
      wait =
        options.rateLimitWaitMs ??
        (Number.isFinite(interval) && interval > 0 ? interval : HUBSPOT_RATE_LIMIT_WAIT_MS);
    }
    const user =
      policy === 'DAILY'
        ? 'HubSpot account reached its daily API limit; the sync continues after midnight UTC.'
        : hubspotUserMessage('rate_limited');
    return new ConnectorError('rate_limited', technical, user, wait);
  }
  if (code === 'permission_denied') {
    const scopes = b.errors?.flatMap(
      (e) => (e.context?.requiredGranularScopes as string[] | undefined) ?? [],
    );
    return new ConnectorError(code, technical, hubspotUserMessage(code, scopes?.join(', ') ?? ''));
  }
  if (code === 'validation') {
    const existing = existingIdOf(message);
    const user = existing
      ? `HubSpot already has a contact with this email (record ${existing}).`
      : hubspotUserMessage('validation', hubspotValidationDetail(message) || category);
    return new ConnectorError(code, technical, user);
  }
  return new ConnectorError(code, technical, hubspotUserMessage(code));
}

export type HubSpotClientOptions = {
  baseUrl?: string;
  /** A private app token, or a function asked per attempt (an OAuth access token that may be renewed). */
  token: string | (() => string | Promise<string>);
  /** Called once after a 401 with the token that was sent: renews it (OAuth refresh); true means try again. */
  onAuthFailure?: (refusedToken: string) => Promise<boolean>;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per 10 s per token (HubSpot's tier: 100 Free/Starter, 190 Professional/Enterprise); 0 turns pacing off. */
  perTenSeconds?: number;
  /** Search requests per second (5). */
  searchPerSecond?: number;
  /** Wait after a ten-secondly 429 (HubSpot: the rest of the 10 s window; the default waits a whole window). */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type HubSpotClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
};

export function createHubSpotClient(options: HubSpotClientOptions): HubSpotClient {
  const getToken = typeof options.token === 'function' ? options.token : () => options.token as string;
  const perTen = options.perTenSeconds ?? HUBSPOT_PER_TEN_SECONDS;
  const store = options.rateLimitStore ?? hubspotRateLimitStore(options.pool);
  const limiterOptions = { ...(options.sleep ? { sleep: options.sleep } : {}), maxWaitMs: 120_000 };
  const burst = perTen > 0 ? new RateLimiter(padded(perTen, 10_000), store, limiterOptions) : null;
  const search =
    perTen > 0
      ? new RateLimiter(
          padded(options.searchPerSecond ?? HUBSPOT_SEARCH_PER_SECOND, 1_000),
          store,
          limiterOptions,
        )
      : null;
  let last: { token: string; key: string } | null = null;
  // The token's key is a hash: the token itself never goes into the shared store.
  const keyOf = (token: string) => {
    if (last?.token !== token)
      last = { token, key: `hubspot:token:${createHash('sha256').update(token).digest('hex').slice(0, 24)}` };
    return last.key;
  };
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? HUBSPOT_API_URL,
    headers: async () => ({ authorization: `Bearer ${await getToken()}` }),
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? HUBSPOT_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) =>
      mapHubSpotError(
        status,
        body,
        headers,
        options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {},
      ),
    acquirePermit: async (cost, request) => {
      if (!burst || !search) return;
      const key = keyOf(await getToken());
      if (/\/search(\?|$)/.test(request.path)) await search.acquire(`${key}:search`, cost);
      await burst.acquire(key, cost);
    },
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return {
    http,
    async request<T>(request: HttpRequest) {
      const sent = options.onAuthFailure ? await getToken() : '';
      try {
        return await http.request<T>(request);
      } catch (error) {
        if (
          error instanceof ConnectorError &&
          error.code === 'auth_invalid' &&
          options.onAuthFailure &&
          (await options.onAuthFailure(sent))
        ) {
          return http.request<T>(request);
        }
        throw error;
      }
    },
  };
}

export type HubSpotAccount = {
  portalId: number;
  timeZone?: string;
  companyCurrency?: string;
  uiDomain?: string;
};

/** `GET /account-info/v3/details`: the portal (account) the token belongs to. */
export async function hubspotAccount(client: HubSpotClient): Promise<HubSpotAccount> {
  const { body } = await client.request<HubSpotAccount>({ method: 'GET', path: '/account-info/v3/details' });
  return body;
}
