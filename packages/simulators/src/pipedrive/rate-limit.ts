/**
 * Pipedrive's token-based rate limits, as its "Rate limiting" documentation describes them:
 *
 * - a daily token budget per company (30,000 base tokens x plan multiplier x seats), shared by
 *   every user and integration of the company; each request spends tokens by the weight of its
 *   endpoint (lists and searches cost more than single reads, v2 endpoints less than v1); the
 *   budget resets at midnight (UTC here);
 * - a burst limit per user (token) over a rolling 2-second window, by plan.
 *
 * Responses carry x-ratelimit-limit / -remaining / -reset (the burst window) and
 * x-daily-requests-left (the company's remaining daily tokens). A refused request gets 429 with
 * Pipedrive's error body and spends nothing.
 */
import type { Clock, SimResponse } from '../http.ts';
import { ERROR_INFO } from './model.ts';

export const BURST_WINDOW_MS = 2000;
/** Growth plan (api_token): 40 requests per 2 seconds. */
export const DEFAULT_BURST = 40;
/** 30,000 base tokens x multiplier 2 (Growth) x 5 seats. */
export const DEFAULT_DAILY_TOKENS = 300_000;

export type EndpointClass = 'get' | 'list' | 'write' | 'delete' | 'search' | 'other';

/** Token cost by endpoint class and API version (v2 endpoints cost about half of v1's). */
export const DEFAULT_COSTS: Record<'v1' | 'v2', Record<EndpointClass, number>> = {
  v1: { get: 2, list: 20, write: 10, delete: 6, search: 40, other: 10 },
  v2: { get: 1, list: 10, write: 5, delete: 3, search: 20, other: 5 },
};

export type RateLimitOptions = {
  /** Requests per rolling 2-second window per token. */
  burst?: number;
  /** The company's daily token budget. */
  dailyTokens?: number;
  /** Override token costs. */
  costs?: Partial<Record<'v1' | 'v2', Partial<Record<EndpointClass, number>>>>;
};

export type Refusal = 'burst' | 'daily';

export class RateLimiter {
  readonly burst: number;
  readonly dailyTokens: number;
  readonly costs: Record<'v1' | 'v2', Record<EndpointClass, number>>;
  private readonly windows = new Map<string, number[]>();
  private day = -1;
  private spent = 0;

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.burst = options.burst ?? DEFAULT_BURST;
    this.dailyTokens = options.dailyTokens ?? DEFAULT_DAILY_TOKENS;
    this.costs = {
      v1: { ...DEFAULT_COSTS.v1, ...options.costs?.v1 },
      v2: { ...DEFAULT_COSTS.v2, ...options.costs?.v2 },
    };
  }

  cost(version: 'v1' | 'v2', cls: EndpointClass): number {
    return this.costs[version][cls];
  }

  private window(token: string): number[] {
    const now = this.clock.now();
    const w = (this.windows.get(token) ?? []).filter((t) => t > now - BURST_WINDOW_MS);
    this.windows.set(token, w);
    return w;
  }

  private rollDay(): void {
    const day = Math.floor(this.clock.now() / 86_400_000);
    if (day !== this.day) {
      this.day = day;
      this.spent = 0;
    }
  }

  /** Tokens left in the company's daily budget. */
  get dailyLeft(): number {
    this.rollDay();
    return Math.max(0, this.dailyTokens - this.spent);
  }

  /** Count the request and spend its tokens, or say which limit refuses it. */
  take(token: string, cost: number): Refusal | undefined {
    if (!this.enabled) return undefined;
    this.rollDay();
    const w = this.window(token);
    if (this.spent + cost > this.dailyTokens) return 'daily';
    if (w.length >= this.burst) return 'burst';
    w.push(this.clock.now());
    this.spent += cost;
    return undefined;
  }

  headers(token: string): Record<string, string> {
    if (!this.enabled) return {};
    const w = this.window(token);
    const now = this.clock.now();
    const oldest = w[0];
    const reset = oldest === undefined ? BURST_WINDOW_MS : oldest + BURST_WINDOW_MS - now;
    return {
      'x-ratelimit-limit': String(this.burst),
      'x-ratelimit-remaining': String(Math.max(0, this.burst - w.length)),
      'x-ratelimit-reset': String(Math.max(1, Math.ceil(reset / 1000))),
      'x-daily-requests-left': String(this.dailyLeft),
    };
  }

  refusal(kind: Refusal, token: string): SimResponse {
    return { status: 429, body: rateLimitBody(kind), headers: this.headers(token) };
  }
}

export function rateLimitBody(kind: Refusal): Record<string, unknown> {
  return {
    success: false,
    error: kind === 'burst' ? 'Request over limit' : 'Daily API token budget exceeded',
    errorCode: 429,
    error_info: ERROR_INFO,
    data: null,
    additional_data: null,
  };
}
