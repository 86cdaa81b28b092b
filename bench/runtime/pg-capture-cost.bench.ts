import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabase } from '../../apps/server/src/db/database';
import { startEmbeddedPostgres } from '../../apps/server/src/db/embedded-postgres';
import { pumpDecodedChanges } from '../../packages/connectors/postgresql/logical-decoding';
import { createPostgresqlConnector } from '../../packages/connectors/postgresql/postgresql-connector';
import { type BenchRow, median, runStandalone } from '../harness';

const ROWS = Number(process.env.LOCKSTEP_BENCH_CAPTURE_ROWS ?? 100_000);
const SINGLES = Number(process.env.LOCKSTEP_BENCH_CAPTURE_SINGLES ?? 2_000);
const REPEATS = 3;

/**
 * What change capture costs the user's own writes, and what draining costs Lockstep. One table of
 * ROWS rows per capture (none, triggers, logical decoding) in an embedded PostgreSQL with
 * wal_level=logical. Timed on the user's connection: one UPDATE of every row, and SINGLES one-row
 * INSERTs each in its own transaction (median of REPEATS). For logical decoding, the time to drain
 * the slot after the bulk update is timed too (the work moved off the user's transaction).
 */
export async function run(): Promise<BenchRow[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bench-capture-'));
  const embedded = await startEmbeddedPostgres(dir, () => {}, { wal_level: 'logical' });
  const rows: BenchRow[] = [];
  try {
    const results: Record<string, { bulk: number; singles: number; drain?: number }> = {};
    for (const capture of ['none', 'triggers', 'logical'] as const) {
      const db = `capture_${capture}`;
      await ensureDatabase(embedded.url('postgres'), db);
      const user = new pg.Client({ connectionString: embedded.url(db) });
      await user.connect();
      await user.query('create table items (id bigint primary key, name text not null, n integer not null)');
      await user.query(`insert into items select g, 'item ' || g, 0 from generate_series(1, ${ROWS}) g`);
      await user.query('vacuum analyze items');
      const connector =
        capture === 'none'
          ? null
          : createPostgresqlConnector({ connectionString: embedded.url(db), changeCapture: capture });
      // The first read installs the capture (triggers, or the slot).
      await connector?.read('public.items', null, { pageSize: 1 });
      const bulk: number[] = [];
      const singles: number[] = [];
      const drains: number[] = [];
      for (let r = 0; r < REPEATS; r++) {
        let t = performance.now();
        await user.query('update items set n = n + 1');
        bulk.push(performance.now() - t);
        if (capture === 'logical') {
          t = performance.now();
          while ((await pumpDecodedChanges(user)) > 0) {}
          drains.push(performance.now() - t);
        }
        t = performance.now();
        for (let i = 0; i < SINGLES; i++)
          await user.query('insert into items (id, name, n) values ($1, $2, 0)', [
            ROWS + r * SINGLES + i + 1,
            `new ${i}`,
          ]);
        singles.push(performance.now() - t);
        if (capture === 'logical') while ((await pumpDecodedChanges(user)) > 0) {}
      }
      results[capture] = {
        bulk: median(bulk),
        singles: median(singles),
        ...(drains.length ? { drain: median(drains) } : {}),
      };
      await connector?.end();
      if (capture === 'logical')
        await user.query(
          'select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()',
        );
      await user.end();
    }
    const base = results.none as { bulk: number; singles: number };
    for (const capture of ['none', 'triggers', 'logical'] as const) {
      const r = results[capture] as { bulk: number; singles: number; drain?: number };
      const extra = (v: number, b: number) => {
        if (capture === 'none') return '';
        const pct = ((v - b) / b) * 100;
        return `${pct >= 0 ? '+' : ''}${pct.toFixed(0)}% against no capture`;
      };
      rows.push({
        name: `user's UPDATE of ${ROWS.toLocaleString('en')} rows, capture: ${capture}`,
        value: r.bulk,
        unit: 'ms',
        note: `${extra(r.bulk, base.bulk).trim() || 'no capture'}${r.drain !== undefined ? `; Lockstep drains the slot in ${r.drain.toFixed(0)} ms afterwards` : ''}`,
      });
      rows.push({
        name: `user's ${SINGLES.toLocaleString('en')} one-row INSERT transactions, capture: ${capture}`,
        value: r.singles,
        unit: 'ms',
        note: extra(r.singles, base.singles).trim() || 'no capture',
      });
    }
  } finally {
    await embedded.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

await runStandalone(import.meta.url, run);
