/**
 * Webflow's Data API v2 on the SDK: one HttpClient per connection with a bearer token (a site token
 * or a workspace/OAuth token), the SDK's RateLimiter with Webflow's documented per-key limit (60
 * requests a minute on Starter and Basic sites, 120 on CMS, eCommerce and Business; Lockstep paces at
 * 60 unless told the plan's), 429s waited out by their Retry-After (Webflow sends one, typically 60 s),
 * and Webflow's error body (`{code, message, externalReference, details[]}`) mapped to the SDK's codes
 * with text for users.
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

export const WEBFLOW_API_URL = 'https://api.webflow.com';
/** Webflow's limit per API key on Starter and Basic site plans (CMS and Business: 120). */
export const WEBFLOW_PER_MINUTE = 60;
/** A 429 without Retry-After is waited out this long (Webflow's window is a minute). */
export const WEBFLOW_RATE_LIMIT_WAIT_MS = 60_000;

export const WEBFLOW_RATE_LIMIT: RateLimitPolicy = {
  scope: 'token',
  windows: [{ limit: WEBFLOW_PER_MINUTE, windowMs: 60_000 }],
};

/** One store per process unless a pool is given: then every worker process shares the budget. */
export const webflowRateLimitStore = rateLimitStoreCache();

export type WebflowErrorBody = {
  code?: string;
  message?: string;
  msg?: string;
  externalReference?: string | null;
  details?: unknown[];
  problems?: unknown[];
};

export function webflowUserMessage(code: ConnectorErrorCode, detail = ''): string {
  switch (code) {
    case 'auth_invalid':
      return 'Webflow refused the API token (revoked, expired or mistyped). Sign in with Webflow again, or enter a new site token.';
    case 'permission_denied':
      return `The Webflow token lacks a scope${detail ? ` (${detail})` : ''}. Make a site token with CMS read and write and Sites read and write.`;
    case 'rate_limited':
      return 'Webflow is rate limiting this token; the sync will continue shortly.';
    case 'validation':
      return `Webflow refused the value${detail ? `: ${detail}` : '.'}`;
    case 'not_found':
      return 'The Webflow item or collection no longer exists (it may have been deleted).';
    case 'version_conflict':
      return 'The Webflow item changed at the same time; Lockstep compares it again.';
    case 'cursor_invalid':
      return 'The Webflow read position expired; a full rescan will run.';
    default:
      return 'Webflow is not answering right now; the sync will retry.';
  }
}

/** The details of a Webflow error (strings, or `{param, description}` objects) as one line. */
export function webflowErrorDetail(body: WebflowErrorBody): string {
  const parts: string[] = [];
  for (const d of [...(body.details ?? []), ...(body.problems ?? [])]) {
    if (typeof d === 'string') parts.push(d);
    else if (d && typeof d === 'object') {
      const o = d as Record<string, unknown>;
      const name = o.param ?? o.field ?? o.slug;
      const text = o.description ?? o.message ?? o.reason;
      if (typeof text === 'string') parts.push(typeof name === 'string' ? `${name}: ${text}` : text);
      else parts.push(JSON.stringify(d));
    }
  }
  return parts.join('; ');
}

/** Webflow's error bodies to SDK codes. */
export function mapWebflowError(
  status: number,
  body: unknown,
  headers?: Headers,
  options: { rateLimitWaitMs?: number; now?: () => number } = {},
): ConnectorError {
  const b = (body && typeof body === 'object' ? body : {}) as WebflowErrorBody;
  const wfCode = typeof b.code === 'string' ? b.code : '';
  const message =
    typeof b.message === 'string'
      ? b.message
      : typeof b.msg === 'string'
        ? b.msg
        : typeof body === 'string'
          ? body.slice(0, 300)
          : '';
  let code: ConnectorErrorCode = defaultHttpErrorCode(status);
  if (status === 429 || wfCode === 'too_many_requests') code = 'rate_limited';
  else if (wfCode === 'not_authorized' || wfCode === 'unauthorized' || status === 401) code = 'auth_invalid';
  else if (wfCode === 'missing_scopes' || wfCode === 'forbidden' || status === 403)
    code = 'permission_denied';
  else if (wfCode === 'resource_not_found' || wfCode === 'route_not_found') code = 'not_found';
  else if (
    wfCode === 'validation_error' ||
    wfCode === 'duplicate_value' ||
    wfCode === 'bad_request' ||
    wfCode === 'conflict'
  )
    code = 'validation';
  const detail = webflowErrorDetail(b);
  const technical = `Webflow ${status} ${wfCode || 'error'}${message ? `: ${message}` : ''}${detail ? ` (${detail})` : ''}`;
  if (code === 'rate_limited') {
    const after = headers?.get('retry-after');
    const seconds = after && /^\d+(\.\d+)?$/.test(after.trim()) ? Number(after) * 1000 : null;
    const date = after && seconds === null ? Date.parse(after) : Number.NaN;
    const now = options.now?.() ?? Date.now();
    const wait =
      seconds ??
      (Number.isNaN(date)
        ? (options.rateLimitWaitMs ?? WEBFLOW_RATE_LIMIT_WAIT_MS)
        : Math.max(0, date - now));
    return new ConnectorError('rate_limited', technical, webflowUserMessage('rate_limited'), wait);
  }
  if (code === 'validation')
    return new ConnectorError(code, technical, webflowUserMessage(code, detail || message));
  if (code === 'permission_denied')
    return new ConnectorError(code, technical, webflowUserMessage(code, message));
  return new ConnectorError(code, technical, webflowUserMessage(code));
}

export type WebflowClientOptions = {
  baseUrl?: string;
  /** A site token, or a function asked per attempt (an OAuth access token). */
  token: string | (() => string | Promise<string>);
  /** PostgreSQL pool: the budget is shared by every worker process through it. */
  pool?: pg.Pool | null;
  rateLimitStore?: RateLimitStore;
  /** Requests a minute per token (the site plan's: 60 or 120); 0 turns pacing off. */
  perMinute?: number;
  /** Wait after a 429 without Retry-After. */
  rateLimitWaitMs?: number;
  maxAttempts?: number;
  /** A 429 wait longer than this is not slept through: the run is retried later instead. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export type WebflowClient = {
  http: HttpClient;
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>>;
};

export function createWebflowClient(options: WebflowClientOptions): WebflowClient {
  const getToken = typeof options.token === 'function' ? options.token : () => options.token as string;
  const perMinute = options.perMinute ?? WEBFLOW_PER_MINUTE;
  const store = options.rateLimitStore ?? webflowRateLimitStore(options.pool);
  // Paced a little under Webflow's window (5% longer): grants a window apart can arrive closer.
  const limiter =
    perMinute > 0
      ? new RateLimiter({ scope: 'token', windows: [{ limit: perMinute, windowMs: 63_000 }] }, store, {
          ...(options.sleep ? { sleep: options.sleep } : {}),
          maxWaitMs: 120_000,
        })
      : null;
  let last: { token: string; key: string } | null = null;
  // The token's key is a hash: the token itself never goes into the shared store.
  const keyOf = (token: string) => {
    if (last?.token !== token)
      last = { token, key: `webflow:token:${createHash('sha256').update(token).digest('hex').slice(0, 24)}` };
    return last.key;
  };
  const base = (options.baseUrl ?? WEBFLOW_API_URL).replace(/\/+$/, '');
  const http = new HttpClient({
    // Every path is under /v2 (a simulator or proxy given with /v2 already is taken as it is).
    baseUrl: /\/v2$/.test(base) ? base : `${base}/v2`,
    headers: async () => ({ authorization: `Bearer ${await getToken()}` }),
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: 500,
    maxDelayMs: 8_000,
    defaultRetryAfterMs: options.rateLimitWaitMs ?? WEBFLOW_RATE_LIMIT_WAIT_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 65_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    mapError: (status, body, headers) =>
      mapWebflowError(
        status,
        body,
        headers,
        options.rateLimitWaitMs !== undefined ? { rateLimitWaitMs: options.rateLimitWaitMs } : {},
      ),
    acquirePermit: async (cost) => {
      if (!limiter) return;
      await limiter.acquire(keyOf(await getToken()), cost);
    },
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return { http, request: (request) => http.request(request) };
}

export type WebflowSite = {
  id: string;
  displayName?: string;
  shortName?: string;
  lastPublished?: string | null;
  customDomains?: { id: string; url?: string }[];
};

/** `GET /v2/sites`: the sites the token can reach (a site token: its one site). */
export async function webflowSites(client: WebflowClient): Promise<WebflowSite[]> {
  const { body } = await client.request<{ sites?: WebflowSite[] }>({ method: 'GET', path: '/sites' });
  return body.sites ?? [];
}
