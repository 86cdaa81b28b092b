import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type WalWatch, watchWal } from './wal-watch';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until `check` holds (a loaded machine delays timers: positive checks do not use a fixed wait). */
async function until(check: () => boolean, ms = 2_000) {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(2);
  expect(check()).toBe(true);
}

/** A connection whose WAL position the test moves; it records whether two queries ever overlapped. */
function fakeServer() {
  const server = { lsn: '0/100', busy: false, overlapped: false, polls: 0 };
  const client = {
    async query(text: string) {
      if (server.busy) server.overlapped = true;
      expect(text).toContain('pg_current_wal_flush_lsn');
      server.polls++;
      return { rows: [{ lsn: server.lsn }] };
    },
  } as unknown as pg.ClientBase;
  return { server, client };
}

let watch: WalWatch | null = null;
afterEach(async () => {
  await watch?.stop();
});

describe('watchWal', () => {
  it('pumps once at start, then only when the WAL moved', async () => {
    const { server, client } = fakeServer();
    let pumps = 0;
    watch = watchWal({ client: () => client, pump: async () => void pumps++, pollMs: 2 });
    await until(() => server.polls > 5);
    expect(pumps).toBe(1);
    server.lsn = '0/200';
    await until(() => pumps === 2);
    await sleep(30);
    expect(pumps).toBe(2);
    expect(watch.stats()).toMatchObject({ pumps: 2, failures: 0 });
  });

  it('keeps one pump in flight, never polls beside it, and pumps again after it if the WAL moved meanwhile', async () => {
    const { server, client } = fakeServer();
    let pumps = 0;
    let release: () => void = () => {};
    watch = watchWal({
      client: () => client,
      pollMs: 1,
      pump: async () => {
        pumps++;
        server.busy = true;
        if (pumps === 2) await new Promise<void>((r) => (release = r));
        server.busy = false;
      },
    });
    await until(() => pumps === 1);
    server.lsn = '0/200';
    await until(() => pumps === 2); // the second pump hangs
    server.lsn = '0/300';
    await sleep(30);
    expect(pumps, 'no second pump while one is in flight').toBe(2);
    release();
    await until(() => pumps === 3); // the WAL moved during the pump: pumped again right after
    expect(server.overlapped).toBe(false);
  });

  it('pumps on the safety net without WAL activity, and retries a failed pump', async () => {
    const { client } = fakeServer();
    let pumps = 0;
    let fail = true;
    watch = watchWal({
      client: () => client,
      pollMs: 1,
      safetyMs: 50,
      pump: async () => {
        pumps++;
        if (fail) {
          fail = false;
          throw new Error('slot busy');
        }
      },
    });
    // The failed pump is tried again without the WAL moving.
    await until(() => pumps === 2);
    expect(watch.stats().failures).toBe(1);
    const t0 = Date.now();
    await until(() => pumps === 3);
    expect(Date.now() - t0, 'the safety net, not every poll').toBeGreaterThanOrEqual(20);
  });

  it('waits while the connection is away, and pumps at once on a new one', async () => {
    const first = fakeServer();
    const second = fakeServer();
    let current: pg.ClientBase | null = first.client;
    const pumpedOn: pg.ClientBase[] = [];
    watch = watchWal({ client: () => current, pollMs: 1, pump: async (c) => void pumpedOn.push(c) });
    await until(() => pumpedOn.length === 1);
    current = null;
    await sleep(20);
    current = second.client;
    await until(() => pumpedOn.length === 2);
    expect(pumpedOn).toEqual([first.client, second.client]);
    await watch.stop();
    const polls = second.server.polls;
    await sleep(20);
    expect(second.server.polls, 'stopped').toBe(polls);
  });
});
