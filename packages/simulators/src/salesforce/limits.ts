/**
 * The org's daily API request allocation. Salesforce counts REST and Bulk API calls over a
 * rolling 24 hours, reports usage on every response (`Sforce-Limit-Info: api-usage=n/m`) and in
 * `GET /limits` (`DailyApiRequests {Max, Remaining}`), and refuses calls past the allocation
 * with 403 REQUEST_LIMIT_EXCEEDED ("TotalRequests Limit exceeded.").
 */
import type { Clock } from '../http.ts';
import { DAY_MS } from './model.ts';

/** A Developer Edition org's allocation. */
export const DEFAULT_DAILY_API_REQUESTS = 15_000;

export type RateLimitOptions = {
  /** Requests allowed per rolling 24 hours (default 15,000). */
  dailyApiRequests?: number;
};

export class ApiUsage {
  readonly max: number;
  /** Times of the counted requests in the last 24 hours, oldest first. */
  private readonly times: number[] = [];

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.max = options.dailyApiRequests ?? DEFAULT_DAILY_API_REQUESTS;
  }

  private prune(): void {
    const cutoff = this.clock.now() - DAY_MS;
    let drop = 0;
    while (drop < this.times.length && (this.times[drop] as number) <= cutoff) drop++;
    if (drop > 0) this.times.splice(0, drop);
  }

  get used(): number {
    this.prune();
    return this.times.length;
  }

  /** Count a request; false when the allocation is used up (the request is refused, not counted). */
  take(): boolean {
    this.prune();
    if (this.enabled && this.times.length >= this.max) return false;
    this.times.push(this.clock.now());
    return true;
  }

  /** Pretend `n` requests were already made (tests of the limit). */
  consume(n: number): void {
    const now = this.clock.now();
    for (let i = 0; i < n; i++) this.times.push(now);
  }

  header(): string {
    return `api-usage=${this.used}/${this.max}`;
  }
}
