/**
 * Memberstack's Admin API limit: 25 requests per second (Quick Start, "Rate Limits"; more on
 * request to support). Counted here per secret key in a fixed one-second window that starts with
 * the key's first request. Every authenticated answer carries the `RateLimit-*` headers; a refused
 * request gets 429 with `Retry-After`.
 */
import type { Clock, SimResponse } from '../http.ts';

export const DEFAULT_PER_SECOND = 25;
export const WINDOW_MS = 1000;

export type RateLimitOptions = {
  /** Requests per second per key (default 25). */
  perSecond?: number;
};

export const RATE_LIMIT_MESSAGE = 'Too many requests, please try again later.';

type Window = { start: number; count: number };

export class RateLimiter {
  readonly perSecond: number;
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.perSecond = options.perSecond ?? DEFAULT_PER_SECOND;
  }

  private windowOf(key: string): Window {
    const now = this.clock.now();
    let w = this.windows.get(key);
    if (!w || now >= w.start + WINDOW_MS) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  /** Count the request; false when the key is over its limit. */
  take(key: string): boolean {
    if (!this.enabled) return true;
    const w = this.windowOf(key);
    w.count += 1;
    return w.count <= this.perSecond;
  }

  /** Seconds until the window resets, at least 1 while it is open. */
  private resetSeconds(w: Window): number {
    return Math.max(1, Math.ceil((w.start + WINDOW_MS - this.clock.now()) / 1000));
  }

  headers(key: string): Record<string, string> {
    if (!this.enabled) return {};
    const w = this.windowOf(key);
    return {
      'RateLimit-Policy': `${this.perSecond};w=1`,
      'RateLimit-Limit': String(this.perSecond),
      'RateLimit-Remaining': String(Math.max(0, this.perSecond - w.count)),
      'RateLimit-Reset': String(this.resetSeconds(w)),
    };
  }

  refusal(key: string): SimResponse {
    const w = this.windowOf(key);
    return {
      status: 429,
      body: { code: 'generic-message', message: RATE_LIMIT_MESSAGE },
      headers: { ...this.headers(key), 'Retry-After': String(this.resetSeconds(w)) },
    };
  }
}

/** The 429 a `{ kind: 'rate_limit' }` fault answers with. */
export function rateLimitResponse(perSecond = DEFAULT_PER_SECOND): SimResponse {
  return {
    status: 429,
    body: { code: 'generic-message', message: RATE_LIMIT_MESSAGE },
    headers: {
      'RateLimit-Policy': `${perSecond};w=1`,
      'RateLimit-Limit': String(perSecond),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1',
      'Retry-After': '1',
    },
  };
}
