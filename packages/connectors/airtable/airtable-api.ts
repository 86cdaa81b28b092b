/**
 * Airtable's Web API on the SDK: one HttpClient per connection (retries, Airtable's 30 s wait after a
 * 429 that carries no Retry-After, Airtable's error bodies mapped to the SDK's codes) and the SDK's
 * RateLimiter (5 requests per second per base, shared through PostgreSQL when a pool is given),
 * plus OAuth (authorization code with PKCE, single-use refresh tokens) and the metadata calls.
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

export const AIRTABLE_API_URL = 'https://api.airtable.com';
/** OAuth lives on airtable.com, not on the API host. */
export const AIRTABLE_OAUTH_URL = 'https://airtable.com';
export const AIRTABLE_OAUTH_SCOPES = [
  'data.records:read',
  'data.records:write',
  'schema.bases:read',
  'schema.bases:write',
  'webhook:manage',
] as const;

/** Airtable's documented limit: 5 requests per second per base. */
export const AIRTABLE_RATE_LIMIT: RateLimitPolicy = {
  scope: 'base',
  windows: [{ limit: 5, windowMs: 1000 }],
};
/** And 50 per second per token (metadata calls that name no base count here). */
const TOKEN_RATE_LIMIT: RateLimitPolicy = { scope: 'token', windows: [{ limit: 50, windowMs: 1000 }] };
/** Airtable documents no Retry-After on 429: "wait 30 seconds before subsequent requests will succeed". */
export const AIRTABLE_RATE_LIMIT_WAIT_MS = 30_000;

/**
 * The window the limiter paces with is a little longer than Airtable's second (10%): requests granted a
 * second apart can arrive closer together on a busy machine (5% was not enough for CI's two loaded
 * cores), and one request too many locks the base for 30 s.
 */
function padded(policy: RateLimitPolicy, limit?: number): RateLimitPolicy {
  return {
    scope: policy.scope,
    windows: policy.windows.map((w) => ({ limit: limit ?? w.limit, windowMs: Math.ceil(w.windowMs * 1.1) })),
  };
}

/** One store per process unless a pool is given: every connector of the process shares the budget. */
export const airtableRateLimitStore = rateLimitStoreCache();

function errorType(body: unknown): { type: string; message: string } {
  const b = body as { error?: unknown; errors?: { error?: string; message?: string }[] } | null | undefined;
  if (b && typeof b.error === 'object' && b.error !== null) {
    const e = b.error as { type?: string; message?: string };
    return { type: e.type ?? 'ERROR', message: e.message ?? '' };
  }
  if (b && typeof b.error === 'string') return { type: b.error, message: '' };
  const first = b?.errors?.[0];
  if (first) return { type: first.error ?? 'ERROR', message: first.message ?? '' };
  return { type: typeof body === 'string' && body ? body.slice(0, 200) : 'ERROR', message: '' };
}

export function airtableUserMessage(code: ConnectorErrorCode, detail = ''): string {
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
    case 'cursor_invalid':
      return 'The Airtable read position expired; a full rescan will run.';
    default:
      return 'Airtable is not answering right now; the sync will retry.';
  }
}

/** Airtable's error bodies (`{"error":{"type","message"}}`, `{"error":"NOT_FOUND"}`, `{"errors":[...]}`) to SDK codes. */
export function mapAirtableError(status: number, body: unknown): ConnectorError {
  const { type, message } = errorType(body);
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  if (type === 'INVALID_OFFSET_VALUE' || type === 'LIST_RECORDS_ITERATOR_NOT_AVAILABLE')
    code = 'cursor_invalid';
  else if (type === 'ROW_DOES_NOT_EXIST' || type === 'MODEL_ID_NOT_FOUND' || type === 'TABLE_NOT_FOUND')
    code = 'not_found';
  else if (type === 'RATE_LIMIT_REACHED') code = 'rate_limited';
  else if (type === 'AUTHENTICATION_REQUIRED') code = 'auth_invalid';
  else if (type.startsWith('INVALID_PERMISSIONS') || type === 'NOT_AUTHORIZED') code = 'permission_denied';
  const detail = `${type}${message ? `: ${message}` : ''}`;
  // 402: the workspace's plan ran out of API calls for the month.
  const user =
    status === 402
      ? 'The Airtable workspace has used up its API calls for this month. Upgrade the Airtable plan or wait for the next month.'
      : airtableUserMessage(code, message || type);
  return new ConnectorError(
    status === 402 ? 'permission_denied' : code,
    `Airtable ${status} ${detail}`,
    user,
  );
}

export type AirtableClientOptions = {
  baseUrl?: string;
  /** A fixed token, or a function asked per attempt (an OAuth token that may have been renewed). */
  token: string | (() => string | Promise<string>);
  /** Called once after a 401: renews the token (OAuth refresh); true means try again. */
  onAuthFailure?: () => Promise<boolean>;
  /** PostgreSQL pool: the rate limit budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  /** Overrides the store (tests). */
  rateLimitStore?: RateLimitStore;
  /** Requests per second per base; 0 turns pacing off (tests that inject their own 429s). */
  requestsPerSecond?: number;
  /** Wait after a 429 (Airtable: 30 s). */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type AirtableClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
};

/** Which rate-limit key a request counts against: its base, or the token for base-less calls. */
function limitKeyOf(path: string, tokenKey: string): { key: string; perBase: boolean } {
  const p = path.replace(/^https?:\/\/[^/]+/i, '');
  const m = /^\/v0\/(?:meta\/bases\/|bases\/)?(app[A-Za-z0-9]+)/.exec(p);
  return m?.[1] ? { key: `airtable:base:${m[1]}`, perBase: true } : { key: tokenKey, perBase: false };
}

export function createAirtableClient(options: AirtableClientOptions): AirtableClient {
  const getToken = typeof options.token === 'function' ? options.token : () => options.token as string;
  const perSecond = options.requestsPerSecond ?? 5;
  const store = options.rateLimitStore ?? airtableRateLimitStore(options.pool);
  const sleep = options.sleep;
  const limiterOptions = { ...(sleep ? { sleep } : {}), maxWaitMs: 120_000 };
  const baseLimiter =
    perSecond > 0 ? new RateLimiter(padded(AIRTABLE_RATE_LIMIT, perSecond), store, limiterOptions) : null;
  const tokenLimiter =
    perSecond > 0 ? new RateLimiter(padded(TOKEN_RATE_LIMIT), store, limiterOptions) : null;
  // The token's rate-limit key (a hash: the token itself never goes into the shared store).
  let last: { token: string; key: string } | null = null;
  const tokenKeyOf = (token: string) => {
    if (last?.token !== token)
      last = {
        token,
        key: `airtable:token:${createHash('sha256').update(token).digest('hex').slice(0, 24)}`,
      };
    return last.key;
  };
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? AIRTABLE_API_URL,
    headers: async () => ({ authorization: `Bearer ${await getToken()}` }),
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: 250,
    maxDelayMs: 5_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? AIRTABLE_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body) => mapAirtableError(status, body),
    acquirePermit: async (cost, request) => {
      if (!baseLimiter || !tokenLimiter) return;
      const tokenKey = tokenKeyOf(await getToken());
      const { key, perBase } = limitKeyOf(request.path, tokenKey);
      // The base's permit last, right before the request leaves: the strict limit (one request too
      // many locks the base for 30 s) should see the least delay between its grant and the send.
      await tokenLimiter.acquire(tokenKey, cost);
      if (perBase) await baseLimiter.acquire(key, cost);
    },
    ...(sleep ? { sleep } : {}),
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

// --- Metadata

export type AirtableBaseInfo = { id: string; name: string; permissionLevel: string };

export async function airtableWhoami(
  client: AirtableClient,
): Promise<{ id: string; email: string | null; scopes: string[] }> {
  const { body } = await client.request<{ id: string; email?: string; scopes?: string[] }>({
    method: 'GET',
    path: '/v0/meta/whoami',
  });
  return { id: body.id, email: body.email ?? null, scopes: body.scopes ?? [] };
}

/** Every base the token reaches (paged by `offset`). */
export async function airtableListBases(client: AirtableClient): Promise<AirtableBaseInfo[]> {
  const out: AirtableBaseInfo[] = [];
  let offset: string | undefined;
  for (let i = 0; i < 100; i++) {
    const { body } = await client.request<{ bases: AirtableBaseInfo[]; offset?: string }>({
      method: 'GET',
      path: '/v0/meta/bases',
      query: { offset },
    });
    out.push(...body.bases);
    offset = body.offset;
    if (!offset) break;
  }
  return out;
}

// --- OAuth (authorization code with PKCE S256)

export type AirtableOAuthSettings = {
  /** https://airtable.com (the simulator's URL in tests and the sandbox). */
  oauthUrl?: string;
  clientId: string;
  /** Confidential clients send it as Basic auth; public clients have none. */
  clientSecret?: string;
};

export type AirtableTokens = {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  refresh_expires_in?: number;
  scope?: string;
  token_type: string;
};

export function airtableAuthorizeUrl(
  settings: AirtableOAuthSettings,
  params: { redirectUri: string; state: string; codeChallenge: string; scopes?: readonly string[] },
): string {
  const url = new URL('/oauth2/v1/authorize', settings.oauthUrl ?? AIRTABLE_OAUTH_URL);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', (params.scopes ?? AIRTABLE_OAUTH_SCOPES).join(' '));
  url.searchParams.set('state', params.state);
  url.searchParams.set('code_challenge', params.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/**
 * POST /oauth2/v1/token (form body). An OAuth error answer becomes a ConnectorError whose message
 * starts with the OAuth error code (`invalid_grant: ...`, `access_denied: ...`).
 */
export async function requestAirtableTokens(
  settings: AirtableOAuthSettings,
  grant:
    | { grant_type: 'authorization_code'; code: string; code_verifier: string; redirect_uri: string }
    | { grant_type: 'refresh_token'; refresh_token: string },
): Promise<AirtableTokens> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(grant)) form.set(k, v);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (settings.clientSecret) {
    headers.authorization = `Basic ${Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64')}`;
  } else {
    form.set('client_id', settings.clientId);
  }
  let res: Response;
  try {
    res = await fetch(new URL('/oauth2/v1/token', settings.oauthUrl ?? AIRTABLE_OAUTH_URL), {
      method: 'POST',
      headers,
      body: form.toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Airtable token endpoint unreachable: ${error instanceof Error ? error.message : String(error)}`,
      'Airtable could not be reached to finish the sign-in. Try again.',
    );
  }
  const body = (await res.json().catch(() => ({}))) as Partial<AirtableTokens> & {
    error?: string;
    error_description?: string;
  };
  if (res.ok && body.access_token && body.refresh_token) return body as AirtableTokens;
  const oauthError = body.error ?? `http_${res.status}`;
  const invalid = oauthError === 'invalid_grant' || oauthError === 'invalid_client';
  throw new ConnectorError(
    oauthError === 'access_denied'
      ? 'permission_denied'
      : invalid
        ? 'auth_invalid'
        : res.status >= 500
          ? 'transient'
          : 'validation',
    `${oauthError}: ${body.error_description ?? `HTTP ${res.status}`}`,
    invalid
      ? 'Airtable did not accept the sign-in (it may have expired). Connect Airtable again.'
      : `Airtable sign-in failed (${body.error_description ?? oauthError}).`,
  );
}
