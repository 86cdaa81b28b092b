import { describe, expect, it } from 'vitest';
import { ConnectorError } from './connector';
import { createMemoryRateLimitStore, RateLimiter, type RateLimitPolicy, waitForRoom } from './rate-limiter';

// A fake clock that the limiter's sleep advances: waits are measured, not slept.
function clocked(policy: RateLimitPolicy, options: { maxWaitMs?: number } = {}) {
  let now = 1_000_000;
  const waits: number[] = [];
  const store = createMemoryRateLimitStore({ now: () => now });
  const limiter = new RateLimiter(policy, store, {
    ...options,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  });
  return {
    limiter,
    store,
    waits,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

describe('waitForRoom', () => {
  it('is zero while every window has room, else the time until the oldest events slide out', () => {
    const windows = [{ limit: 3, windowMs: 1000 }];
    expect(waitForRoom([], 1, windows, 0)).toBe(0);
    const events = [
      { at: 100, cost: 1 },
      { at: 300, cost: 1 },
      { at: 600, cost: 1 },
    ];
    expect(waitForRoom(events, 1, windows, 700)).toBe(400);
    // Two units need the two oldest events gone.
    expect(waitForRoom(events, 2, windows, 700)).toBe(600);
    expect(waitForRoom(events, 1, windows, 1100)).toBe(0);
  });
});

describe('RateLimiter with the memory store', () => {
  it('grants up to the limit in a window, then waits for the window to slide', async () => {
    const c = clocked({ scope: 'base', windows: [{ limit: 5, windowMs: 1000 }] });
    for (let i = 0; i < 5; i++) await c.limiter.acquire('base1');
    expect(c.waits).toEqual([]);
    await c.limiter.acquire('base1');
    expect(c.waits).toEqual([1000]);
  });

  it('applies every window at once: the per-second limit and the per-minute limit', async () => {
    const c = clocked({
      scope: 'token',
      windows: [
        { limit: 5, windowMs: 1000 },
        { limit: 8, windowMs: 60_000 },
      ],
    });
    const grantedAt: number[] = [];
    for (let i = 0; i < 9; i++) {
      await c.limiter.acquire('tok');
      grantedAt.push(c.now());
    }
    const start = grantedAt[0] ?? 0;
    const offsets = grantedAt.map((t) => t - start);
    // 5 at once, 3 more a second later, the 9th only when the first minute's calls expire.
    expect(offsets).toEqual([0, 0, 0, 0, 0, 1000, 1000, 1000, 60_000]);
    for (let i = 0; i < grantedAt.length; i++) {
      const t = grantedAt[i] ?? 0;
      expect(grantedAt.filter((g) => g > t - 1000 && g <= t).length).toBeLessThanOrEqual(5);
      expect(grantedAt.filter((g) => g > t - 60_000 && g <= t).length).toBeLessThanOrEqual(8);
    }
  });

  it('weighs calls by their cost', async () => {
    const c = clocked({ scope: 'account', windows: [{ limit: 10, windowMs: 2000 }] });
    await c.limiter.acquire('acc', 4);
    c.advance(500);
    await c.limiter.acquire('acc', 4);
    expect(c.waits).toEqual([]);
    // 8 used: a cost of 3 needs the first call (at t=0) out of the window, 1500 ms from now.
    await c.limiter.acquire('acc', 3);
    expect(c.waits).toEqual([1500]);
    await c.limiter.acquire('acc', 2);
    expect(c.waits).toEqual([1500]);
  });

  it('keeps keys apart', async () => {
    const c = clocked({ scope: 'base', windows: [{ limit: 1, windowMs: 1000 }] });
    await c.limiter.acquire('a');
    await c.limiter.acquire('b');
    expect(c.waits).toEqual([]);
    await c.limiter.acquire('a');
    expect(c.waits).toEqual([1000]);
  });

  it('refuses a cost no window can ever hold, and hands long waits to the caller', async () => {
    const c = clocked(
      { scope: 'base', windows: [{ limit: 2, windowMs: 86_400_000 }] },
      { maxWaitMs: 60_000 },
    );
    await expect(c.limiter.acquire('k', 3)).rejects.toMatchObject({ code: 'validation' });
    await c.limiter.acquire('k', 2);
    const error = await c.limiter.acquire('k').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 86_400_000 });
    expect(c.waits).toEqual([]);
  });
});
