/**
 * Webflow's request limits: a number of requests per minute per API key (60 on Starter and
 * Basic plans, 120 on CMS, eCommerce and Business), counted in a one-minute window that starts
 * with the key's first request. Every authenticated response carries `X-RateLimit-Limit` and
 * `X-RateLimit-Remaining`; a refused request (not counted) gets 429 `too_many_requests` with
 * `Retry-After` (seconds until the window resets). A site publish is also limited to one
 * successful publish per minute per site.
 */
import type { Clock } from '../http.ts';
import { WebflowApiError } from './model.ts';

export const WINDOW_MS = 60_000;
export const DEFAULT_PER_MINUTE = 60;

export type RateLimitOptions = {
  /** Requests per minute per key (default 60; Webflow's CMS and Business plans allow 120). */
  perMinute?: number;
};

type Usage = { windowStart: number; count: number };

export function tooManyRequests(retryAfterSeconds: number, headers: Record<string, string> = {}) {
  return new WebflowApiError(429, 'too_many_requests', 'Too Many Requests', [], {
    ...headers,
    'Retry-After': String(retryAfterSeconds),
  });
}

export class RateLimiter {
  readonly perMinute: number;
  private readonly usage = new Map<string, Usage>();

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.perMinute = options.perMinute ?? DEFAULT_PER_MINUTE;
  }

  private usageOf(key: string): Usage {
    const now = this.clock.now();
    let u = this.usage.get(key);
    if (!u || now - u.windowStart >= WINDOW_MS) {
      u = { windowStart: now, count: 0 };
      this.usage.set(key, u);
    }
    return u;
  }

  /** Count the request, or throw the 429 that refuses it. */
  take(key: string): void {
    if (!this.enabled) return;
    const u = this.usageOf(key);
    if (u.count >= this.perMinute) {
      const wait = Math.max(1, Math.ceil((u.windowStart + WINDOW_MS - this.clock.now()) / 1000));
      throw tooManyRequests(wait, this.headers(key));
    }
    u.count += 1;
  }

  headers(key: string): Record<string, string> {
    if (!this.enabled) return {};
    const u = this.usageOf(key);
    return {
      'X-RateLimit-Limit': String(this.perMinute),
      'X-RateLimit-Remaining': String(Math.max(0, this.perMinute - u.count)),
    };
  }

  /** The 429 a `{ kind: 'rate_limit' }` fault answers with. */
  refusal(): WebflowApiError {
    return tooManyRequests(60, { 'X-RateLimit-Limit': String(this.perMinute), 'X-RateLimit-Remaining': '0' });
  }
}

/** One successful site publish per minute per site. */
export class PublishLimiter {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    readonly enabled = true,
  ) {}

  check(siteId: string): void {
    if (!this.enabled) return;
    const last = this.last.get(siteId);
    const now = this.clock.now();
    if (last !== undefined && now - last < WINDOW_MS) {
      throw tooManyRequests(Math.max(1, Math.ceil((last + WINDOW_MS - now) / 1000)));
    }
  }

  record(siteId: string): void {
    this.last.set(siteId, this.clock.now());
  }
}
