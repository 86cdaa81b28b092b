/**
 * HubSpot's request limits, per token: a rolling 10-second burst window (100 by default, as
 * for Free/Starter private apps), a daily allowance (250,000, reset at midnight UTC here; HubSpot
 * uses the account's time zone) and the search endpoints' own limit (5 requests per rolling
 * second). Every authenticated response carries the X-HubSpot-RateLimit-* headers; a refused
 * request gets HubSpot's 429 body and does not count.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, SimResponse } from '../http.ts';

export const TEN_SECOND_WINDOW_MS = 10_000;
export const DEFAULT_PER_TEN_SECONDS = 100;
export const DEFAULT_DAILY = 250_000;
export const DEFAULT_SEARCH_PER_SECOND = 5;

export type RateLimitOptions = {
  /** Requests per rolling 10 seconds per token. */
  perTenSeconds?: number;
  /** Requests per day per token. */
  daily?: number;
  /** Search requests per rolling second per token. */
  searchPerSecond?: number;
};

type Policy = 'TEN_SECONDLY_ROLLING' | 'DAILY' | 'SECONDLY';

const MESSAGES: Record<Policy, string> = {
  TEN_SECONDLY_ROLLING: 'You have reached your ten_secondly_rolling limit.',
  DAILY: 'You have reached your daily limit.',
  // The search limit's message; @hubspot/api-client matches it to retry after a second.
  SECONDLY: 'You have reached your secondly limit.',
};

/** HubSpot's 429 body: it has `errorType` and `policyName` instead of `category`. */
export function rateLimitBody(policy: Policy, portalId: number): Record<string, unknown> {
  const groupName =
    policy === 'SECONDLY'
      ? `publicapi:search-secondly:${portalId}`
      : `publicapi:private-app-${policy.toLowerCase()}:${portalId}`;
  return {
    status: 'error',
    message: MESSAGES[policy],
    errorType: 'RATE_LIMIT',
    correlationId: randomUUID(),
    groupName,
    policyName: policy,
    requestId: randomUUID().replaceAll('-', ''),
  };
}

type Usage = { burst: number[]; search: number[]; day: number; dayCount: number };

export class RateLimiter {
  readonly perTenSeconds: number;
  readonly daily: number;
  readonly searchPerSecond: number;
  private readonly usage = new Map<string, Usage>();

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions,
    readonly enabled = true,
  ) {
    this.perTenSeconds = options.perTenSeconds ?? DEFAULT_PER_TEN_SECONDS;
    this.daily = options.daily ?? DEFAULT_DAILY;
    this.searchPerSecond = options.searchPerSecond ?? DEFAULT_SEARCH_PER_SECOND;
  }

  private usageOf(token: string): Usage {
    const now = this.clock.now();
    const day = Math.floor(now / 86_400_000);
    let u = this.usage.get(token);
    if (!u) {
      u = { burst: [], search: [], day, dayCount: 0 };
      this.usage.set(token, u);
    }
    if (u.day !== day) {
      u.day = day;
      u.dayCount = 0;
    }
    u.burst = u.burst.filter((t) => t > now - TEN_SECOND_WINDOW_MS);
    u.search = u.search.filter((t) => t > now - 1000);
    return u;
  }

  /** Count the request, or return the policy that refuses it. */
  take(token: string, isSearch: boolean): Policy | undefined {
    if (!this.enabled) return undefined;
    const u = this.usageOf(token);
    if (u.dayCount >= this.daily) return 'DAILY';
    if (u.burst.length >= this.perTenSeconds) return 'TEN_SECONDLY_ROLLING';
    if (isSearch && u.search.length >= this.searchPerSecond) return 'SECONDLY';
    const now = this.clock.now();
    u.burst.push(now);
    if (isSearch) u.search.push(now);
    u.dayCount += 1;
    return undefined;
  }

  headers(token: string): Record<string, string> {
    const u = this.usageOf(token);
    return {
      'X-HubSpot-RateLimit-Daily': String(this.daily),
      'X-HubSpot-RateLimit-Daily-Remaining': String(Math.max(0, this.daily - u.dayCount)),
      'X-HubSpot-RateLimit-Interval-Milliseconds': String(TEN_SECOND_WINDOW_MS),
      'X-HubSpot-RateLimit-Max': String(this.perTenSeconds),
      'X-HubSpot-RateLimit-Remaining': String(Math.max(0, this.perTenSeconds - u.burst.length)),
    };
  }

  refusal(policy: Policy, token: string, portalId: number): SimResponse {
    return { status: 429, body: rateLimitBody(policy, portalId), headers: this.headers(token) };
  }
}
