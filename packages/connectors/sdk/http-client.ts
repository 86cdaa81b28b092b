import { ConnectorError, type ConnectorErrorCode } from './connector';

/** Maps an app's error answer to the one code set; null falls back to the mapping by status. */
export type MapHttpError = (status: number, body: unknown, headers: Headers) => ConnectorError | null;

export type HttpRequest = {
  method: string;
  /** A path joined to the base URL, or an absolute URL on the base URL's origin (e.g. a next-page link). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON unless it is already a string. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Rate-limit cost of this call (weighted limits); 1 by default. */
  cost?: number;
  /**
   * Whether sending it twice is harmless. By default GET, HEAD, OPTIONS, PUT and DELETE are; a POST
   * or PATCH is retried only when the app cannot have processed it (429, refused connection) unless
   * the caller says it is idempotent (a read through POST, an app-side idempotency key).
   */
  idempotent?: boolean;
  signal?: AbortSignal;
};

export type HttpResponse<T = unknown> = { status: number; headers: Headers; body: T };

export type HttpClientOptions = {
  baseUrl: string;
  /** Added to every request; a function is called per attempt (e.g. a refreshed OAuth token). */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  timeoutMs?: number;
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A Retry-After longer than this is not slept through: the rate_limited error goes to the runtime. */
  maxRetryAfterMs?: number;
  /** Wait used for a 429 without Retry-After (Airtable documents 30 s); exponential backoff otherwise. */
  defaultRetryAfterMs?: number;
  mapError?: MapHttpError;
  /** Called before every attempt, e.g. `(cost) => limiter.acquire(baseId, cost)`. */
  acquirePermit?: (cost: number, request: HttpRequest) => Promise<void>;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
};

export type HttpClientStats = { requests: number; retries: number };

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After as delta-seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

const STATUS_TEXT: Partial<Record<ConnectorErrorCode, string>> = {
  auth_invalid: 'The app refused the credentials. Reconnect the account.',
  permission_denied: 'The account is not allowed to do this in the app.',
  not_found: 'The app could not find this item; it may have been deleted.',
  version_conflict: 'The item changed in the app at the same time; Lockstep will try again.',
  validation: 'The app refused the value.',
  rate_limited: 'The app asked Lockstep to slow down; it will continue shortly.',
  transient: 'The app did not answer properly; Lockstep will try again.',
};

/** The mapping by status that applies when a connector's own mapping has nothing to say. */
export function defaultHttpErrorCode(status: number): ConnectorErrorCode {
  if (status === 401) return 'auth_invalid';
  if (status === 403) return 'permission_denied';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 409 || status === 412) return 'version_conflict';
  if (status === 400 || status === 422) return 'validation';
  if (status === 429) return 'rate_limited';
  return 'transient';
}

function bodySummary(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text === undefined ? '' : text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/**
 * The HTTP client of SaaS connectors, on Node's fetch: a timeout per attempt, retries with
 * exponential backoff and full jitter for transient failures and rate limits (honouring Retry-After),
 * app errors mapped to the connector error code set, and a count of requests for benchmarks.
 */
export class HttpClient {
  readonly stats: HttpClientStats = { requests: 0, retries: 0 };
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly options: HttpClientOptions) {
    this.base = new URL(options.baseUrl);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.baseDelayMs = options.baseDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  url(path: string, query?: HttpRequest['query']): URL {
    let url: URL;
    if (/^https?:\/\//i.test(path)) {
      url = new URL(path);
      // Links from a response may only lead back to the same app, never to another host.
      if (url.origin !== this.base.origin) {
        throw new ConnectorError(
          'validation',
          `refused to follow ${url.origin}`,
          'The app sent an unexpected link.',
        );
      }
    } else {
      const prefix = this.base.href.replace(/\/$/, '');
      url = new URL(`${prefix}${path.startsWith('/') ? path : `/${path}`}`);
    }
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  async request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>> {
    const url = this.url(request.path, request.query);
    const method = request.method.toUpperCase();
    const idempotent = request.idempotent ?? IDEMPOTENT_METHODS.has(method);
    for (let attempt = 1; ; attempt++) {
      let error: ConnectorError;
      let sent = true;
      try {
        await this.options.acquirePermit?.(request.cost ?? 1, request);
        const response = await this.send(url, method, request);
        const body = await readBody(response);
        if (response.ok) return { status: response.status, headers: response.headers, body: body as T };
        error = this.toError(response.status, body, response.headers);
      } catch (caught) {
        if (caught instanceof ConnectorError) throw caught;
        // The caller's own abort is not a failure to retry.
        if (request.signal?.aborted) throw caught;
        sent = !isRefusedConnection(caught);
        error = networkError(caught, url);
      }
      const retryable =
        (error.code === 'transient' || error.code === 'rate_limited') &&
        (idempotent || error.code === 'rate_limited' || !sent);
      if (!retryable || attempt >= this.maxAttempts) throw error;
      const delay = error.retryAfterMs ?? this.backoff(attempt);
      if (delay > this.maxRetryAfterMs) throw error;
      this.stats.retries++;
      await this.sleep(delay);
    }
  }

  private async send(url: URL, method: string, request: HttpRequest): Promise<Response> {
    const extra =
      typeof this.options.headers === 'function' ? await this.options.headers() : this.options.headers;
    const headers: Record<string, string> = { accept: 'application/json', ...extra, ...request.headers };
    let body: string | undefined;
    if (request.body !== undefined) {
      body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
      if (typeof request.body !== 'string' && !hasHeader(headers, 'content-type'))
        headers['content-type'] = 'application/json';
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    this.stats.requests++;
    return fetch(url, {
      method,
      headers,
      body,
      signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
    });
  }

  private toError(status: number, body: unknown, headers: Headers): ConnectorError {
    const mapped = this.options.mapError?.(status, body, headers) ?? null;
    const code = mapped?.code ?? defaultHttpErrorCode(status);
    let retryAfterMs = mapped?.retryAfterMs ?? parseRetryAfter(headers.get('retry-after'), this.now());
    if (retryAfterMs === null && code === 'rate_limited')
      retryAfterMs = this.options.defaultRetryAfterMs ?? null;
    if (mapped && mapped.retryAfterMs === retryAfterMs) return mapped;
    return new ConnectorError(
      code,
      mapped?.message ?? `HTTP ${status}: ${bodySummary(body)}`,
      mapped?.userFacingMessage ?? STATUS_TEXT[code] ?? 'The app refused the request.',
      retryAfterMs,
    );
  }

  /** Full jitter: uniformly between 0 and the exponential ceiling. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
    return Math.floor(this.random() * ceiling);
  }
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  if (/\bjson\b/i.test(response.headers.get('content-type') ?? '')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: string } })?.cause;
  return cause?.code ?? (error as { code?: string })?.code;
}

// Nothing reached the app, so even a non-idempotent request can be sent again.
function isRefusedConnection(error: unknown): boolean {
  const code = causeCode(error);
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

function networkError(error: unknown, url: URL): ConnectorError {
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new ConnectorError('transient', `timeout: ${url.origin}`, 'The app took too long to answer.');
  }
  const detail = causeCode(error) ?? (error instanceof Error ? error.message : String(error));
  return new ConnectorError(
    'transient',
    `network error (${detail}): ${url.origin}`,
    'The app could not be reached; Lockstep will try again.',
  );
}
