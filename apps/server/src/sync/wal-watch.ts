import type pg from 'pg';

/** The one query the watch makes while nothing happens: no table read, no transaction id, no WAL. */
const POLL = 'select pg_current_wal_flush_lsn()::text as lsn';

export type WalWatchOptions = {
  /** The connection to poll and pump on (null while it is reconnecting: the watch waits). */
  client: () => pg.ClientBase | null;
  /** Drains the slot (`pumpDecodedChanges`); runs on the same connection, never beside a poll. */
  pump: (client: pg.ClientBase) => Promise<unknown>;
  /** How often the WAL flush position is polled. */
  pollMs?: number;
  /** A pump at least this often even if the position did not move (the safety net). */
  safetyMs?: number;
};

export type WalWatch = {
  /** Polls made and pumps started so far (for tests and benches). */
  stats(): { polls: number; pumps: number; failures: number };
  /** Stops polling; resolves once a poll or pump in flight has finished (the slot is free again). */
  stop(): Promise<void>;
};

/**
 * Wakes a logical-decoding pump on WAL activity instead of on a timer. Every `pollMs` it asks the
 * server for its WAL flush position (one trivial query); only when the position moved since the
 * last pump does it pump. Everything runs in one chain on one connection: at most one pump in
 * flight, never a poll beside it. A poll follows each pump within `pollMs` of the pump's start (at
 * once if the pump took longer), so WAL written during a pump is pumped right after.
 *
 * The position is the server's, not the database's: writes to any database of the server (Lockstep's
 * own too) wake the pump, which then finds nothing to store and writes nothing, so the watch
 * settles. A pump that stored changes moved the WAL itself, which costs one more, empty, pump.
 * A failed poll or pump is tried again with backoff (up to `safetyMs`).
 */
export function watchWal(options: WalWatchOptions): WalWatch {
  const pollMs = options.pollMs ?? 10;
  const safetyMs = options.safetyMs ?? 5_000;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let inFlight: Promise<unknown> | null = null;
  let lastLsn: string | null = null;
  let lastClient: pg.ClientBase | null = null;
  let lastPumpAt = 0;
  let failedInARow = 0;
  const stats = { polls: 0, pumps: 0, failures: 0 };

  /** One poll, and a pump if the WAL moved; answers the delay to the next poll. */
  async function step(): Promise<number> {
    const client = options.client();
    if (!client) return pollMs;
    if (client !== lastClient) {
      // A new connection (a reconnect): pump at once, the position seen before says nothing now.
      lastClient = client;
      lastLsn = null;
    }
    try {
      const lsn = (await client.query(POLL)).rows[0]?.lsn as string;
      stats.polls++;
      if (stopped) return pollMs;
      if (lsn !== lastLsn || performance.now() - lastPumpAt >= safetyMs) {
        lastPumpAt = performance.now();
        stats.pumps++;
        // Set before the pump: WAL written from here on (by the pump too) is seen at the next poll.
        lastLsn = lsn;
        await options.pump(client);
      }
      failedInARow = 0;
      return pollMs;
    } catch {
      // The slot or the server unavailable: pump again at the next poll that works, with backoff.
      stats.failures++;
      lastLsn = null;
      failedInARow++;
      return Math.min(safetyMs, pollMs * 2 ** Math.min(failedInARow, 12));
    }
  }

  function schedule(delay: number) {
    if (stopped) return;
    timer = setTimeout(tick, Math.max(0, delay));
    timer.unref?.();
  }

  async function tick() {
    timer = null;
    const started = performance.now();
    const running = step();
    inFlight = running;
    const delay = await running;
    inFlight = null;
    // The cadence counts from the start of the step: a pump longer than pollMs is followed at once.
    schedule(delay - (performance.now() - started));
  }

  schedule(0);
  return {
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
}
