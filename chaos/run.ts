import { connect, DDL, setUpSync, startCluster } from './lockstep';
import { parseOptions } from './options';
import { compare, differingRows, lockstepOps, lockstepWrites, overwrittenValues, readSide } from './report';
import { startWorkload } from './workload';

/**
 * `npm run chaos` (long form) or `npm run chaos -- --short` (CI): two real PostgreSQL databases
 * synced both ways through real api and worker processes, written to concurrently on both sides
 * while the worker and the api are killed and database connections terminated; then quiescence and
 * a row-by-row comparison against the log of every write. Exits 1 when a target is missed.
 */
const o = parseOptions(process.argv.slice(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => {
  if (!o.json) console.log(line);
};

async function main() {
  const cluster = await startCluster();
  try {
    const a = await connect(cluster.urls.a);
    const b = await connect(cluster.urls.b);
    const lockstep = await connect(cluster.urls.lockstep);
    for (const c of [a, b]) {
      await c.query(DDL);
      // The same rows on both sides: the first sync matches them on id and writes nothing. Row 0 is
      // the writers' to leave alone: the kill-recovery probe edits it.
      await c.query(
        `insert into contacts (id, email, name, score, note, updated)
           select g, 'c' || g || '@example.com', 'seed ' || g, g, null, timestamptz '2026-01-01 00:00:00.123456+00' + g * interval '1.000001 second'
             from generate_series(0, $1::int) g`,
        [o.rows],
      );
    }
    cluster.start('api');
    await cluster.apiUp();
    cluster.start('worker');
    const { coreBaseId } = await setUpSync(cluster.base, cluster.urls);
    const runsDone = async () =>
      Number(
        (
          await lockstep.query(
            `select count(*)::int as n from sync_log where core_base_id = $1 and status = 'done'`,
            [coreBaseId],
          )
        ).rows[0].n,
      );
    for (let i = 0; i < 600 && (await runsDone()) === 0; i++) await sleep(200);
    say(
      `chaos: ${o.rows} rows on each side, first sync done; ${o.seconds} s of writes (${o.rate}/s per side, ${o.conflicts} conflicts/s, ${Math.round(o.colliding * 100)}% colliding inserts${o.kills ? ', worker/api kills' : ''}${o.terminate ? ', terminated connections' : ''})`,
    );

    const workload = startWorkload(cluster.urls, o.rows, o);
    const faults = { workerKills: 0, apiKills: 0, terminations: 0 };
    const until = Date.now() + o.seconds * 1000;
    let nextKill = Date.now() + 4000 + Math.random() * 8000;
    let nextTerminate = Date.now() + 5000 + Math.random() * 5000;
    while (Date.now() < until) {
      await sleep(250);
      if (o.kills && Date.now() >= nextKill) {
        // Mostly the worker; every third fault the api process.
        const role =
          faults.workerKills > 0 && faults.workerKills % 3 === 0 && faults.apiKills * 3 < faults.workerKills
            ? 'api'
            : 'worker';
        await cluster.kill(role);
        faults[role === 'api' ? 'apiKills' : 'workerKills']++;
        nextKill = Date.now() + 4000 + Math.random() * 8000;
      }
      if (o.terminate && Date.now() >= nextTerminate) {
        await lockstep.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where datname = 'chaos_lockstep' and pid <> pg_backend_pid() and application_name not like 'lockstep-liveness%'`,
        );
        faults.terminations++;
        nextTerminate = Date.now() + 5000 + Math.random() * 5000;
      }
    }
    const lastWrite = await workload.stop();

    // Quiescence: both sides equal, and still equal 2 s later.
    let equalSince: number | null = null;
    let quiescedAt: number | null = null;
    const deadline = Date.now() + o.settleSeconds * 1000;
    while (Date.now() < deadline) {
      const same = differingRows(await readSide(a), await readSide(b)).length === 0;
      if (same) {
        equalSince ??= Date.now();
        if (Date.now() - equalSince >= 2000) {
          quiescedAt = equalSince;
          break;
        }
      } else equalSince = null;
      await sleep(100);
    }

    // Kill recovery: a worker killed, a write on one side, the time until the other side has it.
    const recoveries: number[] = [];
    if (o.kills)
      for (let i = 0; i < 3; i++) {
        await cluster.kill('worker');
        const t0 = Date.now();
        await a.query(`update contacts set note = $1 where id = 0`, [`recovery-${i}`]);
        for (let j = 0; j < 600; j++) {
          const r = await b.query('select note from contacts where id = 0');
          if (r.rows[0]?.note === `recovery-${i}`) {
            recoveries.push((Date.now() - t0) / 1000);
            break;
          }
          await sleep(50);
        }
      }

    const [sideA, sideB] = [await readSide(a), await readSide(b)];
    const findings = compare(
      workload.log,
      sideA,
      sideB,
      await overwrittenValues(lockstep, coreBaseId),
      await lockstepWrites(lockstep, coreBaseId),
      await lockstepOps(lockstep, coreBaseId),
    );
    const issues = (
      await lockstep.query(
        `select code, count(*)::int as n from sync_error where core_base_id = $1 and status <> 'resolved' group by code`,
        [coreBaseId],
      )
    ).rows as { code: string; n: number }[];
    const runs = await lockstep.query(
      `select count(*)::int as n, count(*) filter (where status = 'failed')::int as failed from sync_log where core_base_id = $1`,
      [coreBaseId],
    );
    const quiescence = quiescedAt === null ? null : Math.max(0, (quiescedAt - lastWrite) / 1000);
    const result = {
      options: o,
      writes: workload.log.length,
      writerErrors: workload.failures.length,
      faults,
      runs: runs.rows[0],
      rows: { a: sideA.size, b: sideB.size },
      ...findings,
      openIssues: Object.fromEntries(issues.map((i) => [i.code, i.n])),
      quiescenceSeconds: quiescence,
      killRecoverySeconds: recoveries,
    };
    const missed: string[] = [];
    if (findings.rowsDiffering) missed.push(`${findings.rowsDiffering} rows differ`);
    if (findings.lostUpdates) missed.push(`${findings.lostUpdates} lost updates`);
    if (findings.resurrectedDeletes) missed.push(`${findings.resurrectedDeletes} resurrected deletes`);
    if (findings.unpropagatedDeletes) missed.push(`${findings.unpropagatedDeletes} unpropagated deletes`);
    if (findings.duplicates) missed.push(`${findings.duplicates} duplicates`);
    if (quiescence === null) missed.push(`no quiescence within ${o.settleSeconds} s`);
    else if (!o.kills && !o.terminate && quiescence > 2)
      missed.push(`quiescence ${quiescence.toFixed(1)} s > 2 s`);
    if (recoveries.length < (o.kills ? 3 : 0) || recoveries.some((s) => s > o.recoveryTarget))
      missed.push(
        `kill recovery ${recoveries.map((s) => s.toFixed(1)).join(', ')} s (target < ${o.recoveryTarget} s each)`,
      );

    if (o.json) console.log(JSON.stringify({ ...result, missed }, null, 2));
    else {
      const row = (k: string, v: unknown) =>
        console.log(`  ${k.padEnd(34)} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
      console.log('chaos report');
      row('writes logged', result.writes);
      row('writer errors', result.writerErrors);
      row('faults', faults);
      row('runs (failed)', `${result.runs.n} (${result.runs.failed})`);
      row('rows a / b', `${sideA.size} / ${sideB.size}`);
      row('rows differing', findings.rowsDiffering);
      row('lost updates', findings.lostUpdates);
      row('conflict losers recorded', findings.recordedConflictLosers);
      row('resurrected deletes', findings.resurrectedDeletes);
      row('unpropagated deletes', findings.unpropagatedDeletes);
      row('delete-vs-edit (edit kept by rule)', findings.deleteEditConflicts);
      row('duplicates', findings.duplicates);
      row(
        'conflict pairs (won by a / b / neither)',
        `${findings.conflicts.pairs} (${findings.conflicts.wonByA} / ${findings.conflicts.wonByB} / ${findings.conflicts.neither})`,
      );
      row('open issues', result.openIssues);
      row('seconds to quiescence', quiescence === null ? 'never' : quiescence.toFixed(2));
      row('seconds to in step after a kill', recoveries.map((s) => s.toFixed(2)).join(', ') || '-');
      for (const e of findings.examples) console.log(`    differs: ${e}`);
      for (const e of findings.lostExamples) console.log(`    lost: ${e}`);
      for (const e of findings.resurrectedExamples) console.log(`    resurrected: ${e}`);
      for (const e of workload.failures.slice(0, 5)) console.log(`    writer error: ${e}`);
      console.log(missed.length ? `MISSED: ${missed.join('; ')}` : 'all targets met');
    }
    for (const c of [a, b, lockstep]) await c.end();
    if (missed.length && !o.json) console.log(cluster.logs.slice(-15).join('\n'));
    process.exitCode = missed.length ? 1 : 0;
  } finally {
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
