import type pg from 'pg';
import { ConnectorError } from './connector';
import type { RateLimitPolicy, RateLimitWindow } from './rate-limit-policy';

export type { RateLimitPolicy, RateLimitWindow } from './rate-limit-policy';

/** Granted (cost recorded), or how long to wait before asking again. */
export type AcquireOutcome = { granted: true } | { granted: false; waitMs: number };

/**
 * Where the events of a key live. `tryAcquire` must be atomic per key: check every window and record
 * the cost only if all have room.
 */
export type RateLimitStore = {
  tryAcquire(key: string, cost: number, windows: readonly RateLimitWindow[]): Promise<AcquireOutcome>;
};

type Event = { at: number; cost: number };

/**
 * How long until `cost` more fits in every window, given the events of one key (oldest first):
 * 0 when it fits now.
 */
export function waitForRoom(
  events: readonly Event[],
  cost: number,
  windows: readonly RateLimitWindow[],
  now: number,
): number {
  let wait = 0;
  for (const w of windows) {
    const inWindow = events.filter((e) => e.at > now - w.windowMs);
    let excess = inWindow.reduce((sum, e) => sum + e.cost, 0) + cost - w.limit;
    // The window has room once enough of its oldest events slide out of it.
    for (const e of inWindow) {
      if (excess <= 0) break;
      excess -= e.cost;
      wait = Math.max(wait, e.at + w.windowMs - now);
    }
  }
  return wait;
}

/** For a single process: a sliding log of events per key. */
export function createMemoryRateLimitStore(options: { now?: () => number } = {}): RateLimitStore {
  const now = options.now ?? Date.now;
  const eventsByKey = new Map<string, Event[]>();
  return {
    async tryAcquire(key, cost, windows) {
      const t = now();
      const longest = Math.max(...windows.map((w) => w.windowMs));
      const events = (eventsByKey.get(key) ?? []).filter((e) => e.at > t - longest);
      const waitMs = waitForRoom(events, cost, windows, t);
      if (waitMs === 0) events.push({ at: t, cost });
      eventsByKey.set(key, events);
      return waitMs === 0 ? { granted: true } : { granted: false, waitMs };
    },
  };
}

export const RATE_LIMIT_EVENTS_TABLE = 'lockstep_rate_limit_events';
// Advisory locks taken by this store live in their own class (first key), apart from other locks.
const LOCK_CLASS = 0x4c53_524c;

/**
 * Shared by every worker process: events live in `lockstep_rate_limit_events` (migration
 * 0003-rate-limits). Per key, one transaction takes an advisory lock, measures every window on the
 * database clock and records the event only if all have room, so workers together never exceed the
 * limit. Events older than the longest window are deleted on the way.
 */
export function createPostgresRateLimitStore(pool: pg.Pool): RateLimitStore {
  return {
    async tryAcquire(key, cost, windows) {
      const client = await pool.connect();
      let failure: Error | undefined;
      try {
        await client.query('begin');
        await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, key]);
        const longest = Math.max(...windows.map((w) => w.windowMs));
        // clock_timestamp(), not now(): the transaction may have waited for the lock.
        await client.query(
          `delete from ${RATE_LIMIT_EVENTS_TABLE} where key = $1 and at <= clock_timestamp() - $2 * interval '1 millisecond'`,
          [key, longest],
        );
        const { rows } = await client.query(
          `select (extract(epoch from clock_timestamp()) * 1000)::float8 as now,
                  coalesce(array_agg((extract(epoch from at) * 1000)::float8 order by at), '{}') as ats,
                  coalesce(array_agg(cost order by at), '{}') as costs
           from ${RATE_LIMIT_EVENTS_TABLE} where key = $1`,
          [key],
        );
        const row = rows[0] as { now: number; ats: number[]; costs: number[] };
        const events = row.ats.map((at, i) => ({ at, cost: row.costs[i] ?? 0 }));
        const now = row.now;
        const waitMs = Math.ceil(waitForRoom(events, cost, windows, now));
        if (waitMs === 0) {
          await client.query(
            `insert into ${RATE_LIMIT_EVENTS_TABLE} (key, at, cost) values ($1, clock_timestamp(), $2)`,
            [key, cost],
          );
        }
        await client.query('commit');
        return waitMs === 0 ? { granted: true } : { granted: false, waitMs };
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        // With the error, the pool discards the client rather than lend out a broken connection.
        client.release(failure);
      }
    },
  };
}

/**
 * The store an app's connectors pace with: one per process, or, given a pool, one per pool (every
 * worker process then shares the budget through PostgreSQL). Each app makes its own cache, so its
 * process budget is its own.
 */
export function rateLimitStoreCache(): (pool?: pg.Pool | null) => RateLimitStore {
  const processStore = createMemoryRateLimitStore();
  const poolStores = new WeakMap<pg.Pool, RateLimitStore>();
  return (pool) => {
    if (!pool) return processStore;
    let store = poolStores.get(pool);
    if (!store) {
      store = createPostgresRateLimitStore(pool);
      poolStores.set(pool, store);
    }
    return store;
  };
}

export type RateLimiterOptions = {
  sleep?: (ms: number) => Promise<void>;
  /** Longer waits are not slept through: `acquire` throws rate_limited with the wait instead. */
  maxWaitMs?: number;
};

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for a permit under a connector's policy; costs are weighted per call (1 by default). */
export class RateLimiter {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxWaitMs: number;

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly store: RateLimitStore,
    options: RateLimiterOptions = {},
  ) {
    if (policy.windows.length === 0) throw new Error('a rate limit policy needs at least one window');
    this.sleep = options.sleep ?? defaultSleep;
    this.maxWaitMs = options.maxWaitMs ?? 60_000;
  }

  async acquire(key: string, cost = 1): Promise<void> {
    const tooBig = this.policy.windows.find((w) => cost > w.limit);
    if (tooBig) {
      throw new ConnectorError(
        'validation',
        `a call costing ${cost} can never fit a limit of ${tooBig.limit} per ${tooBig.windowMs} ms`,
        'This request is larger than the app allows at once.',
      );
    }
    for (;;) {
      const outcome = await this.store.tryAcquire(key, cost, this.policy.windows);
      if (outcome.granted) return;
      if (outcome.waitMs > this.maxWaitMs) {
        throw new ConnectorError(
          'rate_limited',
          `rate limit for ${key}: next permit in ${outcome.waitMs} ms`,
          'The app’s rate limit is used up for now; Lockstep will continue when it resets.',
          outcome.waitMs,
        );
      }
      await this.sleep(outcome.waitMs);
    }
  }
}
