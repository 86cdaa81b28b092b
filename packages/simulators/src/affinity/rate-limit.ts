/**
 * Affinity's documented limits (v1 "Rate Limits", v2 "Rate Limits"), shared by both API versions:
 * 900 requests per user (API key) per minute, and a monthly allowance per account that resets
 * at the end of each calendar month (100,000 on the Scale and Advanced tiers). `/rate-limit` and
 * `/auth/whoami` do not count toward the monthly allowance. Every response carries
 * `X-Ratelimit-Limit-User`, `-User-Remaining`, `-User-Reset` (seconds) and `X-Ratelimit-Limit-Org`,
 * `-Org-Remaining`, `-Org-Reset`. A refused request is not counted and gets 429.
 *
 * Windows run on the simulator's clock: the minute starts with a key's first request in it, the
 * month is the UTC calendar month.
 */
import type { Clock } from '../http.ts';

export const DEFAULT_PER_MINUTE = 900;
export const DEFAULT_MONTHLY = 100_000;
const MINUTE_MS = 60_000;

export type RateLimitOptions = {
  /** Requests per API key per minute (default 900). */
  perMinute?: number;
  /** Requests per account per calendar month (default 100,000). */
  monthly?: number;
};

export type LimitOutcome = { headers: Record<string, string>; refused?: 'user' | 'org' };

function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export class RateLimiter {
  readonly perMinute: number;
  readonly monthly: number;
  private readonly minutes = new Map<string, { start: number; count: number }>();
  private month = { end: 0, count: 0 };

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions = {},
    readonly enabled = true,
  ) {
    this.perMinute = options.perMinute ?? DEFAULT_PER_MINUTE;
    this.monthly = options.monthly ?? DEFAULT_MONTHLY;
  }

  private window(key: string): { start: number; count: number } {
    const now = this.clock.now();
    let w = this.minutes.get(key);
    if (!w || now >= w.start + MINUTE_MS) {
      w = { start: now, count: 0 };
      this.minutes.set(key, w);
    }
    if (now >= this.month.end) this.month = { end: nextMonthStart(now), count: 0 };
    return w;
  }

  private headers(w: { start: number; count: number }): Record<string, string> {
    const now = this.clock.now();
    return {
      'X-Ratelimit-Limit-User': String(this.perMinute),
      'X-Ratelimit-Limit-User-Remaining': String(Math.max(0, this.perMinute - w.count)),
      'X-Ratelimit-Limit-User-Reset': String(Math.max(0, Math.ceil((w.start + MINUTE_MS - now) / 1000))),
      'X-Ratelimit-Limit-Org': String(this.monthly),
      'X-Ratelimit-Limit-Org-Remaining': String(Math.max(0, this.monthly - this.month.count)),
      'X-Ratelimit-Limit-Org-Reset': String(Math.max(0, Math.ceil((this.month.end - now) / 1000))),
    };
  }

  /** Count a request for `key` (or refuse it). `monthlyExempt` for /rate-limit and /auth/whoami. */
  take(key: string, monthlyExempt = false): LimitOutcome {
    const w = this.window(key);
    if (this.enabled) {
      if (w.count >= this.perMinute) return { headers: this.headers(w), refused: 'user' };
      if (!monthlyExempt && this.month.count >= this.monthly)
        return { headers: this.headers(w), refused: 'org' };
    }
    w.count += 1;
    if (!monthlyExempt) this.month.count += 1;
    return { headers: this.headers(w) };
  }

  /** The v1 `GET /rate-limit` body for `key`, without counting. */
  status(key: string): Record<string, unknown> {
    const w = this.window(key);
    const now = this.clock.now();
    return {
      rate: {
        org_monthly: {
          limit: this.monthly,
          remaining: Math.max(0, this.monthly - this.month.count),
          reset: Math.max(0, Math.ceil((this.month.end - now) / 1000)),
          used: this.month.count,
        },
        api_key_per_minute: {
          limit: this.perMinute,
          remaining: Math.max(0, this.perMinute - w.count),
          reset: w.count === 0 ? 0 : Math.max(0, Math.ceil((w.start + MINUTE_MS - now) / 1000)),
          used: w.count,
        },
      },
    };
  }
}
