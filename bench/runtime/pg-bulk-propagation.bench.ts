import { chunkTimings } from '../../apps/server/src/sync/chunk-timings';
import { type BenchRow, runStandalone } from '../harness';
import { count, quiet, startTwoWaySync, waitFor } from './two-way-setup';

const ROWS = Number(process.env.LOCKSTEP_BENCH_BULK_ROWS ?? 10_000);

/**
 * Bulk propagation, PostgreSQL <-> PostgreSQL through the real runtime (trigger, NOTIFY, pg-boss,
 * worker): one transaction updates every row of a `ROWS`-row table on side A, timed from its commit
 * until side B holds the same values; then one transaction inserts `ROWS` new rows on side B, timed
 * until side A has them all.
 */
export async function run(): Promise<BenchRow[]> {
  const sync = await startTwoWaySync({ rows: ROWS, port: 3996 });
  try {
    const watchA = await sync.connect('bench_a');
    const watchB = await sync.connect('bench_b');
    const sumOf = async (c: typeof watchA) =>
      Number((await c.query('select coalesce(sum(n), 0) as s from items')).rows[0].s);

    // Stage timings of the chunks (stderr): of the bulk update, then of the bulk insert.
    const printTimings = (what: string) => {
      console.error(
        `${what}:\n${[...chunkTimings.entries()]
          .sort((x, y) => y[1] - x[1])
          .map(([k, v]) => `  ${k}: ${Math.round(v)} ms`)
          .join('\n')}`,
      );
      chunkTimings.clear();
    };
    chunkTimings.clear();
    const stats = async (step: 'reset' | 'print') => {
      if (process.env.LOCKSTEP_BENCH_STATEMENTS !== '1') return;
      const c = await sync.connect('postgres');
      if (step === 'reset') {
        for (const db of ['bench_a', 'bench_b', 'postgres']) {
          const d = await sync.connect(db);
          await d.query('create extension if not exists pg_stat_statements');
          await d.end();
        }
        await c.query('select pg_stat_statements_reset()');
      } else {
        const top = await c.query(`select round(s.total_exec_time) as ms, s.calls, d.datname,
            left(regexp_replace(s.query, '\\s+', ' ', 'g'), 200) as q
          from pg_stat_statements s join pg_database d on d.oid = s.dbid order by s.total_exec_time desc limit 25`);
        for (const x of top.rows) console.error(`${x.ms} ms  ${x.calls}x  ${x.datname}  ${x.q}`);
      }
      await c.end();
    };
    await stats('reset');
    await sync.a.query('update items set n = n + 1');
    const updateMs = await waitFor(async () => (await sumOf(watchB)) === ROWS, 120_000, 10);
    await quiet(sync.ctx.db, sync.coreBaseId);
    printTimings('bulk update');
    await stats('print');

    await sync.b.query(
      `insert into items select g, 'new ' || g, 0, g / 3.0, now() from generate_series(${ROWS + 1}, ${ROWS * 2}) g`,
    );
    const insertMs = await waitFor(async () => (await count(watchA)) === ROWS * 2, 120_000, 10);
    await quiet(sync.ctx.db, sync.coreBaseId);
    printTimings('bulk insert');

    return [
      {
        name: `bulk propagation, one transaction updating ${ROWS} rows, A -> B`,
        value: updateMs / 1000,
        unit: 's',
        target: '<= 0.5 s',
        note: `first sync of the ${ROWS} rows took ${(sync.firstSyncMs / 1000).toFixed(1)} s through the queue`,
      },
      {
        name: `bulk propagation, one transaction inserting ${ROWS} rows, B -> A`,
        value: insertMs / 1000,
        unit: 's',
        target: '<= 0.5 s',
      },
    ];
  } finally {
    await sync.close();
  }
}

await runStandalone(import.meta.url, run);
