/**
 * Stripe's basic rate limiter: per account and mode, reads (GET) and writes (POST, DELETE) are
 * counted separately over a rolling second; live mode allows 100 of each, test mode 25. A refused
 * request is not counted and gets 429 with Stripe's error body (`code: rate_limit`) and
 * `Stripe-Should-Retry: true` (it was not executed, so a retry is safe). Stripe sends no
 * rate-limit headers on accepted requests.
 */
import type { Clock } from '../http.ts';
import { StripeApiError } from './errors.ts';

export const DEFAULT_LIVE_PER_SECOND = 100;
export const DEFAULT_TEST_PER_SECOND = 25;

export type RateLimitOptions = {
  /** Reads and writes per second in live mode (default 100 each). */
  livePerSecond?: number;
  /** Reads and writes per second in test mode (default 25 each). */
  testPerSecond?: number;
};

export const RATE_LIMIT_MESSAGE =
  'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.';

export function rateLimitError(): StripeApiError {
  return new StripeApiError(
    429,
    { type: 'invalid_request_error', code: 'rate_limit', message: RATE_LIMIT_MESSAGE },
    { 'Stripe-Should-Retry': 'true' },
  );
}

export class RateLimiter {
  readonly livePerSecond: number;
  readonly testPerSecond: number;
  private readonly windows = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions = {},
    readonly enabled = true,
  ) {
    this.livePerSecond = options.livePerSecond ?? DEFAULT_LIVE_PER_SECOND;
    this.testPerSecond = options.testPerSecond ?? DEFAULT_TEST_PER_SECOND;
  }

  /** Count the request, or return false when the mode's read or write budget is spent. */
  take(livemode: boolean, write: boolean): boolean {
    if (!this.enabled) return true;
    const key = `${livemode ? 'live' : 'test'}:${write ? 'write' : 'read'}`;
    const now = this.clock.now();
    const times = (this.windows.get(key) ?? []).filter((t) => t > now - 1000);
    const max = livemode ? this.livePerSecond : this.testPerSecond;
    if (times.length >= max) {
      this.windows.set(key, times);
      return false;
    }
    times.push(now);
    this.windows.set(key, times);
    return true;
  }

  reset(): void {
    this.windows.clear();
  }
}
