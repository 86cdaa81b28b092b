import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as createRateLimitTables } from '../../../apps/server/src/db/migrations/0003-rate-limits';
import { createTestDatabase } from '../test-support/test-database';
import { createPostgresRateLimitStore, RATE_LIMIT_EVENTS_TABLE, RateLimiter } from './rate-limiter';

// Two limiters on two pools stand for two worker processes sharing one Lockstep database; the table
// comes from the real migration.
const pools: pg.Pool[] = [];
let url = '';

beforeAll(async () => {
  url = await createTestDatabase('rl');
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }),
  });
  await createRateLimitTables(db);
  await db.destroy();
  for (let i = 0; i < 2; i++) pools.push(new pg.Pool({ connectionString: url, max: 4 }));
  // The store prunes old events; a trigger keeps every granted event for the assertions.
  await pools[0]!.query(`create table granted (key text, at timestamptz, cost int)`);
  await pools[0]!.query(`create function keep_granted() returns trigger language plpgsql as $$
    begin insert into granted values (new.key, new.at, new.cost); return null; end $$`);
  await pools[0]!.query(`create trigger keep_granted after insert on ${RATE_LIMIT_EVENTS_TABLE}
    for each row execute function keep_granted()`);
});
afterAll(async () => {
  for (const pool of pools) await pool.end();
});

async function events(key: string, table = RATE_LIMIT_EVENTS_TABLE) {
  const r = await pools[0]!.query(
    `select (extract(epoch from at) * 1000)::float8 as at, cost from ${table} where key = $1 order by at`,
    [key],
  );
  return r.rows as { at: number; cost: number }[];
}

describe('PostgreSQL rate limit store', () => {
  it('two workers hammering one key together never exceed the limit in any window', async () => {
    const policy = { scope: 'base' as const, windows: [{ limit: 5, windowMs: 1000 }] };
    const limiters = pools.map((pool) => new RateLimiter(policy, createPostgresRateLimitStore(pool)));
    const started = Date.now();
    // 8 concurrent callers per worker, 16 calls in all: at 5 per second this takes 3 seconds.
    await Promise.all(
      limiters.flatMap((limiter) => Array.from({ length: 8 }, () => limiter.acquire('base-A'))),
    );
    const elapsed = Date.now() - started;
    const rows = await events('base-A', 'granted');
    expect(rows).toHaveLength(16);
    for (const row of rows) {
      const inWindow = rows.filter((r) => r.at > row.at - 1000 && r.at <= row.at);
      expect(inWindow.length).toBeLessThanOrEqual(5);
    }
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(elapsed).toBeLessThan(8000);
  });

  it('weighs costs, checks every window, keeps keys apart and reports the wait', async () => {
    const store = createPostgresRateLimitStore(pools[0]!);
    const other = createPostgresRateLimitStore(pools[1]!);
    const windows = [
      { limit: 5, windowMs: 10_000 },
      { limit: 100, windowMs: 60_000 },
    ];
    expect(await store.tryAcquire('acc-1', 3, windows)).toEqual({ granted: true });
    expect(await other.tryAcquire('acc-1', 2, windows)).toEqual({ granted: true });
    const refused = await store.tryAcquire('acc-1', 1, windows);
    expect(refused.granted).toBe(false);
    if (!refused.granted) {
      expect(refused.waitMs).toBeGreaterThan(8000);
      expect(refused.waitMs).toBeLessThanOrEqual(10_000);
    }
    expect(await other.tryAcquire('acc-2', 5, windows)).toEqual({ granted: true });
    // The longer window refuses too, even when the short one has room.
    const long = [
      { limit: 10, windowMs: 100 },
      { limit: 4, windowMs: 60_000 },
    ];
    expect(await store.tryAcquire('acc-3', 4, long)).toEqual({ granted: true });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const refusedLong = await other.tryAcquire('acc-3', 1, long);
    expect(refusedLong.granted).toBe(false);
    if (!refusedLong.granted) expect(refusedLong.waitMs).toBeGreaterThan(55_000);
    expect((await events('acc-1')).map((e) => e.cost)).toEqual([3, 2]);
  });

  it('deletes events older than the longest window', async () => {
    const store = createPostgresRateLimitStore(pools[0]!);
    const windows = [{ limit: 1, windowMs: 200 }];
    await store.tryAcquire('short', 1, windows);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await store.tryAcquire('short', 1, windows)).toEqual({ granted: true });
    expect(await events('short')).toHaveLength(1);
  });
});
