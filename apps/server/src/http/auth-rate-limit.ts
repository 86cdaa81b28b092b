import { createPostgresRateLimitStore, type RateLimitStore } from '@lockstep/connectors';
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { Config } from '../config';
import { HttpError } from './http-error';

/**
 * What is limited, each counted apart: guessing passwords (sign-in), making accounts (sign-up),
 * password reset mails and tokens, password changes, and the public temporary-connection check.
 */
export type RateLimitedAction =
  | 'sign-in'
  | 'sign-up'
  | 'password-reset'
  | 'password-change'
  | 'temporary-connection';

/** Keys of this limiter start with this, apart from the connectors' keys in the same table. */
export const AUTH_RATE_LIMIT_KEY_PREFIX = 'auth:';

const WHAT: Record<RateLimitedAction, string> = {
  'sign-in': 'sign-in attempts',
  'sign-up': 'sign-up attempts',
  'password-reset': 'password reset requests',
  'password-change': 'password change attempts',
  'temporary-connection': 'connection attempts',
};

export type AuthRateLimiter = {
  /**
   * Counts one attempt of `action` for the client's address and, when given, the email; throws a
   * 429 (with `retryAfterSeconds`) when either is over its limit in the window.
   */
  check(request: FastifyRequest, action: RateLimitedAction, email?: string | null): Promise<void>;
};

/** A 429 in the envelope; the error handler adds `Retry-After`. */
export class TooManyRequests extends HttpError {
  constructor(
    readonly retryAfterSeconds: number,
    what: string,
  ) {
    const wait =
      retryAfterSeconds < 90
        ? `${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`
        : `${Math.ceil(retryAfterSeconds / 60)} minutes`;
    super(429, `Too many ${what}`, `Too many ${what}. Wait ${wait} and try again.`, 'rate_limited');
    this.name = 'TooManyRequests';
  }
}

/**
 * The client's address as Fastify sees it: the socket's, or X-Forwarded-For's only when
 * LOCKSTEP_TRUST_PROXY says whom to believe. IPv6 addresses count per /64 (one host usually has the
 * whole block), IPv4-mapped IPv6 as IPv4.
 */
export function clientAddress(request: Pick<FastifyRequest, 'ip'>): string {
  return addressKey(request.ip ?? 'unknown');
}

export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!ip.includes(':')) return ip;
  const bare = ip.split('%')[0] ?? ip;
  const [head = '', tail = ''] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = bare.includes('::') && tail ? tail.split(':') : [];
  const groups = bare.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Off (LOCKSTEP_AUTH_RATE_LIMIT=off): every check passes. */
export function createAuthRateLimiter(
  settings: Config['authRateLimit'],
  store: RateLimitStore | null,
): AuthRateLimiter {
  if (!settings.enabled || !store) return { check: async () => {} };
  const window = (limit: number) => [{ limit, windowMs: settings.windowMs }];
  return {
    async check(request, action, email) {
      const keys: Array<[string, number]> = [
        [`${AUTH_RATE_LIMIT_KEY_PREFIX}${action}:address:${clientAddress(request)}`, settings.perAddress],
      ];
      const normalized = email?.trim().toLowerCase();
      if (normalized)
        keys.push([`${AUTH_RATE_LIMIT_KEY_PREFIX}${action}:email:${normalized}`, settings.perEmail]);
      for (const [key, limit] of keys) {
        const outcome = await store.tryAcquire(key, 1, window(limit));
        if (!outcome.granted) {
          request.log.warn({ action, key, waitMs: outcome.waitMs }, 'rate limited');
          throw new TooManyRequests(Math.max(1, Math.ceil(outcome.waitMs / 1000)), WHAT[action]);
        }
      }
    },
  };
}

/** The limiter of a process: its events in PostgreSQL (lockstep_rate_limit_events), shared by every api process. */
export function createPostgresAuthRateLimiter(settings: Config['authRateLimit'], pool: pg.Pool) {
  return createAuthRateLimiter(settings, settings.enabled ? createPostgresRateLimitStore(pool) : null);
}
