import { randomBytes } from 'node:crypto';
import {
  createPostgresqlConnector,
  type PostgresqlConnector,
  pumpDecodedChanges,
} from '@lockstep/connectors/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseUrl, query } from '../../test/pg-pair';
import { ensureDatabase } from '../db/database';
import { type WalWatch, watchWal } from './wal-watch';

// The change listener's WAL watch on the run's embedded PostgreSQL (wal_level=logical), in a
// database of its own and with no Lockstep app on the server: a committed edit is drained and
// NOTIFYed within a few polls, and an idle server gets polls, not pumps.
let url: string;
let listen: pg.Client;
let user: pg.Client;
let connector: PostgresqlConnector;
let watch: WalWatch | null = null;
const heard: { table: string; at: number }[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const name = `ww_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  url = databaseUrl(name);
  await query(url, 'create table items (id int primary key, n int not null)');
  await query(url, 'insert into items select g, 0 from generate_series(1, 10) g');
  // A reader's first read makes the slot and registers the table, as a sync's first run does.
  connector = createPostgresqlConnector({ connectionString: url, changeCapture: 'logical' });
  await connector.read('public.items', null, { pageSize: 100 });
  listen = new pg.Client({ connectionString: url });
  await listen.connect();
  listen.on('notification', (m) => heard.push({ table: m.payload ?? '', at: performance.now() }));
  await listen.query('listen lockstep_changes');
  user = new pg.Client({ connectionString: url });
  await user.connect();
});

afterAll(async () => {
  await watch?.stop();
  await connector.end();
  await listen.end();
  // A closed connection's backend lets go of the slot a moment after the client sees it closed.
  for (let i = 0; i < 100; i++) {
    const busy = await user.query(
      `select 1 from pg_replication_slots where database = current_database() and active`,
    );
    if (busy.rowCount === 0) break;
    await sleep(50);
  }
  await user.query(
    `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()`,
  );
  await user.end();
});

/** Waits until the watch made no pump for `quietMs` (whatever the server wrote before has been drained). */
async function settled(w: WalWatch, quietMs = 300) {
  let last = w.stats().pumps;
  for (let i = 0; i < 100; i++) {
    await sleep(quietMs);
    const now = w.stats().pumps;
    if (now === last) return;
    last = now;
  }
  throw new Error('the WAL watch never settled');
}

/** How many times the server's WAL flush position moved during `ms` (sampled every 5 ms). */
async function walMovesDuring(ms: number) {
  const lsn = async () =>
    (await user.query('select pg_current_wal_flush_lsn()::text as l')).rows[0].l as string;
  let last = await lsn();
  let moves = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await sleep(5);
    const now = await lsn();
    if (now !== last) moves++;
    last = now;
  }
  return moves;
}

describe('WAL watch of a logical-decoding listener', () => {
  it('drains a committed edit within a few polls, and only polls while nothing is written', async () => {
    watch = watchWal({ client: () => listen, pump: pumpDecodedChanges, pollMs: 10, safetyMs: 5_000 });
    await settled(watch);

    // Idle: one trivial query per poll, no pump (at most one of the safety net) unless the server's
    // WAL moved: the cluster is shared with the other test files, whose writes move it too.
    const before = watch.stats();
    const moves = await walMovesDuring(1_000);
    const idle = watch.stats();
    expect(
      idle.pumps - before.pumps,
      `pumps over an idle second (WAL moved ${moves} times)`,
    ).toBeLessThanOrEqual(1 + moves);
    expect(idle.polls - before.polls, 'polls over an idle second').toBeGreaterThan(20);
    expect(idle.failures).toBe(0);

    // Single-row updates, each timed from its commit until the listener hears the NOTIFY.
    const times: number[] = [];
    for (let i = 1; i <= 8; i++) {
      const seen = heard.length;
      await user.query('update items set n = $1 where id = $2', [i, 1 + (i % 10)]);
      const committed = performance.now();
      const end = committed + 5_000;
      while (heard.length === seen && performance.now() < end) await sleep(1);
      expect(heard.length, `update ${i} was NOTIFYed`).toBeGreaterThan(seen);
      times.push((heard[seen] as { at: number }).at - committed);
      expect(heard[seen]?.table).toBe('public.items');
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)] as number;
    // The old timer drained every 500 ms: a median well under it means the WAL woke the pump.
    expect(median, `median of ${times.map((t) => t.toFixed(0)).join(', ')} ms`).toBeLessThan(150);

    // Each stored change moved the WAL itself (one more, empty pump), then the watch is idle again.
    await settled(watch);
    const after = watch.stats();
    const movesAfter = await walMovesDuring(1_000);
    expect(
      watch.stats().pumps - after.pumps,
      `pumps over an idle second after the edits (WAL moved ${movesAfter} times)`,
    ).toBeLessThanOrEqual(1 + movesAfter);
  }, 60_000);
});
