/**
 * Attio's documented limits: 100 read requests and 25 write requests per second (for the
 * workspace). A refused request is not processed and gets 429 with `Retry-After` as an HTTP date
 * (when the limit resets, the next clock second) and Attio's error body. Windows are whole
 * seconds on the simulator's clock, so a ManualClock moves them without waiting.
 */
import type { Clock, SimResponse } from '../http.ts';

export const DEFAULT_READS_PER_SECOND = 100;
export const DEFAULT_WRITES_PER_SECOND = 25;

export type RateLimitOptions = { readsPerSecond?: number; writesPerSecond?: number };

export type RequestKind = 'read' | 'write';

export const RATE_LIMIT_BODY = {
  status_code: 429,
  type: 'rate_limit_error',
  code: 'rate_limit_exceeded',
  message: 'Rate limit exceeded, please try again later',
};

export function rateLimitResponse(clock: Clock): SimResponse {
  const resetAt = (Math.floor(clock.now() / 1000) + 1) * 1000;
  return { status: 429, body: RATE_LIMIT_BODY, headers: { 'Retry-After': new Date(resetAt).toUTCString() } };
}

export class RateLimiter {
  readonly readsPerSecond: number;
  readonly writesPerSecond: number;
  private second = -1;
  private counts: Record<RequestKind, number> = { read: 0, write: 0 };

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.readsPerSecond = options.readsPerSecond ?? DEFAULT_READS_PER_SECOND;
    this.writesPerSecond = options.writesPerSecond ?? DEFAULT_WRITES_PER_SECOND;
  }

  /** Count the request, or return the 429 that refuses it. */
  take(kind: RequestKind): SimResponse | undefined {
    if (!this.enabled) return undefined;
    const second = Math.floor(this.clock.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.counts = { read: 0, write: 0 };
    }
    const max = kind === 'read' ? this.readsPerSecond : this.writesPerSecond;
    if (this.counts[kind] >= max) return rateLimitResponse(this.clock);
    this.counts[kind] += 1;
    return undefined;
  }
}
