/**
 * Stripe's API (v1) on the SDK: one HttpClient per connection with the secret or restricted key as
 * a bearer token, form-encoded request bodies (Stripe's v1 API takes no JSON), an `Idempotency-Key`
 * on every write (Stripe stores the first answer for 24 hours and replays it to a retry, so a
 * retried create never makes a second object: POSTs are retried like GETs), the SDK's RateLimiter
 * with Stripe's documented limits (100 requests per second in live mode, 25 in test mode, per
 * account), 429s waited out with backoff (Stripe sends no Retry-After; `Stripe-Should-Retry` says
 * whether a retry can succeed), and Stripe's error body (`{error: {type, code, message, param}}`)
 * mapped to the SDK's codes with text a person can act on.
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

export const STRIPE_API_URL = 'https://api.stripe.com';

/** Stripe's basic rate limiter: requests per second per account, by mode. */
export const STRIPE_LIVE_PER_SECOND = 100;
export const STRIPE_TEST_PER_SECOND = 25;

/** The policy declared in the capabilities: test mode's (the stricter); the client paces by the key's mode. */
export const STRIPE_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: STRIPE_TEST_PER_SECOND, windowMs: 1_000 }],
};

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const stripeRateLimitStore = rateLimitStoreCache();

export type StripeMode = 'test' | 'live';

/** `sk_test_…`/`rk_test_…` are test mode, `sk_live_…`/`rk_live_…` live mode; null for anything else. */
export function keyMode(key: string): StripeMode | null {
  const m = /^(?:sk|rk)_(test|live)_/.exec(key.trim());
  return m ? (m[1] as StripeMode) : null;
}

/** A restricted key (`rk_…`) holds only the permissions given to it in the Dashboard. */
export const isRestrictedKey = (key: string) => key.trim().startsWith('rk_');

export type StripeErrorBody = {
  error?: {
    type?: string;
    code?: string;
    message?: string;
    param?: string;
    doc_url?: string;
    request_log_url?: string;
  };
};

export function stripeUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Stripe refused the API key (wrong, rolled or expired). Enter a current secret or restricted key from Developers > API keys.';
    case 'permission_denied':
      return `The Stripe restricted key lacks a permission${detail ? `: ${detail}` : ''}. Edit the key in Stripe (Developers > API keys) and give it read and write access to this object.`;
    case 'rate_limited':
      return 'Stripe is rate limiting this account; the sync will continue shortly.';
    case 'validation':
      return `Stripe refused the value${detail ? ` ${detail}` : '.'}`;
    case 'not_found':
      return 'The Stripe object no longer exists (it may have been deleted).';
    case 'cursor_invalid':
      return 'The Stripe read position expired; a full rescan will run.';
    default:
      return 'Stripe is not answering right now; the sync will retry.';
  }
}

/** The permission a restricted key's 403 names (`Having the 'rak_customer_write' permission would …`). */
export function missingPermission(message: string): string | undefined {
  return /'(rak_[a-z0-9_]+)'/i.exec(message)?.[1];
}

/**
 * Stripe's error answers to SDK codes. A 429 (rate limit, or `lock_timeout` on an object busy with
 * another request) is rate_limited without a wait of its own: the client backs off exponentially.
 * `Stripe-Should-Retry: false` makes a would-be transient error final; `true` makes a 409 (an
 * idempotent request still running) transient.
 */
export function mapStripeError(status: number, body: unknown, headers?: Headers): ConnectorError {
  const e = ((body && typeof body === 'object' ? body : {}) as StripeErrorBody).error ?? {};
  const message =
    typeof e.message === 'string' ? e.message : typeof body === 'string' ? body.slice(0, 300) : '';
  const shouldRetry = headers?.get('stripe-should-retry') ?? null;
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  // Stripe Connect: the platform's key may no longer act on the account (the user disconnected it).
  if (status === 403 && e.code === 'account_invalid')
    return new ConnectorError(
      'auth_invalid',
      `Stripe ${status} ${e.type ?? 'error'}/account_invalid: ${message}`,
      'Stripe no longer lets Lockstep reach this account (it was disconnected from Lockstep in Stripe). Sign in with Stripe again.',
    );
  if (status === 401 || e.type === 'authentication_error') code = 'auth_invalid';
  else if (status === 403) code = 'permission_denied';
  else if (status === 429 || e.code === 'rate_limit') code = 'rate_limited';
  else if (status === 404 || e.code === 'resource_missing') code = 'not_found';
  else if (e.type === 'idempotency_error') code = 'validation';
  else if (status === 409) code = shouldRetry === 'false' ? 'validation' : 'transient';
  else if (status === 400 || status === 402 || e.type === 'invalid_request_error' || e.type === 'card_error')
    code = 'validation';
  if (code === 'transient' && shouldRetry === 'false') code = 'validation';
  const technical = `Stripe ${status} ${e.type ?? 'error'}${e.code ? `/${e.code}` : ''}${
    e.param ? ` (${e.param})` : ''
  }${message ? `: ${message}` : ''}`;
  if (code === 'permission_denied') {
    const permission = missingPermission(message);
    return new ConnectorError(code, technical, stripeUserMessage(code, permission ?? message));
  }
  if (code === 'validation') {
    const detail =
      e.type === 'idempotency_error'
        ? `: ${message} (a retried write changed its values)`
        : e.param
          ? `of ${e.param}: ${message}`
          : `: ${message}`;
    return new ConnectorError(code, technical, stripeUserMessage(code, detail));
  }
  return new ConnectorError(code, technical, stripeUserMessage(code));
}

/**
 * A body as Stripe's v1 API takes it: `application/x-www-form-urlencoded` with nested hashes as
 * `a[b]=c` and lists as `a[0]=x`. An empty string unsets a value (a metadata key, an address line);
 * undefined leaves it out.
 */
export function formEncode(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  const add = (key: string, value: unknown) => {
    if (value === undefined) return;
    if (value === null) out.append(key, '');
    else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) add(`${key}[${i}]`, v);
    } else if (typeof value === 'object')
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) add(`${key}[${k}]`, v);
    else out.append(key, String(value));
  };
  for (const [k, v] of Object.entries(params)) add(k, v);
  return out.toString();
}

/** A list page: `GET /v1/{objects}`, newest first, paged with `starting_after`. */
export type StripeList<T> = { object: 'list'; data: T[]; has_more: boolean; url?: string };

export type StripeClientOptions = {
  baseUrl?: string;
  /** The secret (`sk_…`) or restricted (`rk_…`) key; with `stripeAccount`, the platform's secret key. */
  apiKey: string;
  /**
   * Stripe Connect: the connected account (`acct_…`) every request acts on, sent as the
   * `Stripe-Account` header with the platform's key (Stripe's recommended way for Standard accounts).
   */
  stripeAccount?: string;
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests per second for this key (100 live, 25 test by the key's prefix); 0 turns pacing off. */
  perSecond?: number;
  /** `Stripe-Version` to pin (the account's default API version when unset). */
  apiVersion?: string;
  maxAttempts?: number;
  /** First backoff after a 429 or a transient error (full jitter, doubling per attempt). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type StripeClient = {
  http: HttpClient;
  mode: StripeMode | null;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
  /** A GET with query parameters (nested and list values encoded as Stripe reads them). */
  get<T = unknown>(path: string, query?: Record<string, unknown>): Promise<HttpResponse<T>>;
  /** A form-encoded POST with an Idempotency-Key (retried safely: Stripe replays the first answer). */
  post<T = unknown>(
    path: string,
    params: Record<string, unknown>,
    idempotencyKey: string,
  ): Promise<HttpResponse<T>>;
  del<T = unknown>(path: string): Promise<HttpResponse<T>>;
};

/** Stripe takes idempotency keys of up to 255 characters: longer ones are hashed down. */
export function stripeIdempotencyKey(key: string): string {
  return key.length <= 255 ? key : `lockstep-${createHash('sha256').update(key).digest('hex')}`;
}

export function createStripeClient(options: StripeClientOptions): StripeClient {
  const apiKey = options.apiKey.trim();
  const mode = keyMode(apiKey);
  const perSecond = options.perSecond ?? (mode === 'live' ? STRIPE_LIVE_PER_SECOND : STRIPE_TEST_PER_SECOND);
  const store = options.rateLimitStore ?? stripeRateLimitStore(options.pool);
  // Paced a little under Stripe's limit (5% longer windows): grants a window apart can arrive closer.
  const limiter =
    perSecond > 0
      ? new RateLimiter({ scope: 'token', windows: [{ limit: perSecond, windowMs: 1_050 }] }, store, {
          ...(options.sleep ? { sleep: options.sleep } : {}),
          maxWaitMs: 60_000,
        })
      : null;
  // The key's hash names its budget: the key itself never goes into the shared store. Stripe's
  // limits are per account: a connected account has its own budget under the platform's key.
  const account = options.stripeAccount?.trim() || undefined;
  const budgetKey = `stripe:key:${createHash('sha256')
    .update(account ? `${apiKey}|${account}` : apiKey)
    .digest('hex')
    .slice(0, 24)}`;
  const http = new HttpClient({
    baseUrl: options.baseUrl ?? STRIPE_API_URL,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(account ? { 'stripe-account': account } : {}),
      ...(options.apiVersion ? { 'stripe-version': options.apiVersion } : {}),
    },
    maxAttempts: options.maxAttempts ?? 6,
    baseDelayMs: options.baseDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 8_000,
    maxRetryAfterMs: 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) => mapStripeError(status, body, headers),
    ...(limiter ? { acquirePermit: (cost) => limiter.acquire(budgetKey, cost) } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const request = <T>(r: HttpRequest) => http.request<T>(r);
  return {
    http,
    mode,
    request,
    get<T>(path: string, query: Record<string, unknown> = {}) {
      const qs = formEncode(query);
      return request<T>({ method: 'GET', path: qs ? `${path}?${qs}` : path });
    },
    post<T>(path: string, params: Record<string, unknown>, idempotencyKey: string) {
      return request<T>({
        method: 'POST',
        path,
        body: formEncode(params),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': stripeIdempotencyKey(idempotencyKey),
        },
        // Stripe answers a repeated key with the first request's result: safe to send again.
        idempotent: true,
      });
    },
    // A DELETE is idempotent by itself (Stripe takes idempotency keys on POSTs): sent again, it
    // finds the object gone, which the connector takes as done.
    del<T>(path: string) {
      return request<T>({ method: 'DELETE', path });
    },
  };
}

export type StripeAccount = {
  id: string;
  email?: string | null;
  business_profile?: { name?: string | null } | null;
  settings?: { dashboard?: { display_name?: string | null } } | null;
};

/** `GET /v1/account`: the account the key belongs to (a restricted key may not be allowed to read it). */
export async function stripeAccount(client: StripeClient): Promise<StripeAccount> {
  const { body } = await client.get<StripeAccount>('/v1/account');
  return body;
}
