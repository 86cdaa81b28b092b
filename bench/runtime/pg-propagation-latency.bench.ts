import { chunkTimings } from '../../apps/server/src/sync/chunk-timings';
import { type BenchRow, runStandalone } from '../harness';
import { percentile, quiet, sleep, startTwoWaySync, waitFor } from './two-way-setup';

const UPDATES = Number(process.env.LOCKSTEP_BENCH_UPDATES ?? 50);
/** Logical decoding is drained every 0.5 s: fewer updates show its latency well enough. */
const LOGICAL_UPDATES = Number(process.env.LOCKSTEP_BENCH_LOGICAL_UPDATES ?? 15);
const TABLE_ROWS = Number(process.env.LOCKSTEP_BENCH_LATENCY_ROWS ?? 1_000);
const SPACING_MS = 50;

/**
 * Propagation latency, PostgreSQL <-> PostgreSQL through the real runtime: the change-capture
 * trigger NOTIFYs, the worker's listener queues a pg-boss run, the worker runs it. Single-row
 * updates alternate between the sides, one every 50 ms at the earliest; each is timed from its
 * commit on one side until the other side shows it (polled every millisecond on a connection of its
 * own). Then the same with logical decoding on both sides (the listener drains the slots every 0.5 s).
 */
export async function run(): Promise<BenchRow[]> {
  return [...(await measure('triggers', UPDATES)), ...(await measure('logical', LOGICAL_UPDATES))];
}

async function measure(capture: 'triggers' | 'logical', UPDATES: number): Promise<BenchRow[]> {
  const label = capture === 'logical' ? ', logical decoding' : '';
  const sync = await startTwoWaySync({ rows: TABLE_ROWS, port: 3997, capture });
  try {
    const watchA = await sync.connect('bench_a');
    const watchB = await sync.connect('bench_b');
    const times: Record<'a_to_b' | 'b_to_a', number[]> = { a_to_b: [], b_to_a: [] };
    let missed = 0;
    for (let i = 1; i <= UPDATES * 2; i++) {
      const started = performance.now();
      const fromA = i % 2 === 1;
      const [writer, watcher] = fromA ? [sync.a, watchB] : [sync.b, watchA];
      const id = 1 + ((i * 7919) % TABLE_ROWS);
      await writer.query('update items set n = $1 where id = $2', [i, id]);
      const committed = performance.now();
      try {
        await waitFor(
          async () => (await watcher.query('select n from items where id = $1', [id])).rows[0]?.n === i,
          10_000,
          1,
        );
        (fromA ? times.a_to_b : times.b_to_a).push(performance.now() - committed);
      } catch {
        missed++;
      }
      const wait = SPACING_MS - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
    await quiet(sync.ctx.db, sync.coreBaseId);
    console.error(
      capture,
      [...chunkTimings.entries()]
        .sort((x, y) => y[1] - x[1])
        .map(([k, v]) => `${k}: ${Math.round(v)}`)
        .join('\n'),
    );
    chunkTimings.clear();
    // The run itself (sync log started -> finished) versus the rest (trigger, NOTIFY, queue, poll).
    const runs = (
      await sync.ctx.db
        .selectFrom('sync_log')
        .select(['started_at', 'finished_at'])
        .where('core_base_id', '=', sync.coreBaseId)
        .where('trigger', '=', 'change')
        .execute()
    ).flatMap((r) => (r.finished_at ? [r.finished_at.getTime() - r.started_at.getTime()] : []));
    const all = [...times.a_to_b, ...times.b_to_a];
    const note = (v: number[]) =>
      `p95 ${percentile(v, 95).toFixed(0)} ms, max ${Math.max(...v).toFixed(0)} ms, ${v.length} updates`;
    return [
      {
        name: `propagation latency p50${label}, single-row updates both ways (${UPDATES} per side, ${TABLE_ROWS} rows)`,
        value: percentile(all, 50),
        unit: 'ms',
        target: capture === 'logical' ? 'none (drained every 0.5 s)' : 'p50 <= 30 ms, p95 <= 100 ms',
        note: `${note(all)}${missed ? `, ${missed} not seen within 10 s` : ''}; ${runs.length} runs, median run ${percentile(runs, 50)} ms`,
      },
      {
        name: `propagation latency p50${label}, A -> B`,
        value: percentile(times.a_to_b, 50),
        unit: 'ms',
        note: note(times.a_to_b),
      },
      {
        name: `propagation latency p50${label}, B -> A`,
        value: percentile(times.b_to_a, 50),
        unit: 'ms',
        note: note(times.b_to_a),
      },
    ];
  } finally {
    await sync.close();
  }
}

await runStandalone(import.meta.url, run);
