import { ConnectorError } from '@lockstep/connectors';
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { raiseOutageIssue, resolveOutageIssues } from '../sync/outage-issues';
import { requestDryRun } from './sync-dry-run';
import { emitRunEvents } from './webhook-delivery';
import type { WorkerLiveness } from './worker-liveness';

export const SYNC_RUN = 'sync-run';
export type ChunkResult = 'more_work' | 'done' | 'failed';
export type SyncRunData = { coreBaseId: string; trigger: string };

/** One chunk of a sync's work; returns whether more is left. Throwing means a transient failure: pg-boss retries. */
export type SyncRunner = {
  runChunk(input: {
    coreBaseId: string;
    syncLogId: string;
    trigger: string;
  }): Promise<{ result: ChunkResult; error?: string; recheckSoon?: boolean }>;
};

/** How soon a run reads again when committed changes wait behind a running transaction. */
const RECHECK_SECONDS = 1;

/** Priorities: a verified webhook or a user's "sync now" jumps ahead of the poll schedule. */
export const PRIORITY = { schedule: 0, webhook: 10, user: 20 } as const;

/**
 * Enqueues a run of one core base. The queue is `stately` keyed by core base: at most one queued
 * and one active run per sync, so a burst of triggers collapses into one queued run; a higher
 * priority trigger raises the queued run's priority instead.
 */
export async function requestSyncRun(
  boss: PgBoss,
  coreBaseId: string,
  trigger: string,
  priority: number = PRIORITY.schedule,
  options: { startAfterSeconds?: number } = {},
) {
  const id = await boss.send(SYNC_RUN, { coreBaseId, trigger } satisfies SyncRunData, {
    singletonKey: coreBaseId,
    priority,
    ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
  });
  if (id === null && priority > PRIORITY.schedule) {
    await boss.update(SYNC_RUN, undefined, { singletonKey: coreBaseId, priority });
  }
  return id;
}

/**
 * Runs one chunk. A sync log left `running` (by the previous chunk, or by a process that died) is
 * continued rather than duplicated, so a restart resumes the same run.
 */
export async function handleSyncRun(
  db: Db,
  boss: PgBoss,
  runner: SyncRunner,
  data: SyncRunData,
  options: { chain?: boolean } = {},
): Promise<ChunkResult> {
  const base = await db
    .selectFrom('core_base')
    .select(['id', 'owner_id', 'sync_state', 'dry_run'])
    .where('id', '=', data.coreBaseId)
    .executeTakeFirst();
  if (!base) return 'done'; // deleted meanwhile
  // A sync switched off (by the user, or paused for a broken connection) does not run; applying a
  // preview is the one run of a sync that is not on yet.
  if (base.sync_state === 'off' && data.trigger !== 'preview') return 'done';
  // Dry-run mode: every wake-up (a change, sync now, the schedule) plans instead of writing, so the
  // plan shows what waits; applying turns the mode off and queues a real run.
  if (base.dry_run && data.trigger !== 'preview') {
    // A run the mode came in the middle of stops here; what it had left shows in the plan.
    await db
      .updateTable('sync_log')
      .set({
        status: 'cancelled',
        finished_at: new Date(),
        error: 'Dry-run mode was switched on: what this run had left to write waits for review.',
      })
      .where('core_base_id', '=', base.id)
      .where('status', '=', 'running')
      // An undo is a run of its own (jobs/undo-run.ts), never continued or ended by a sync run.
      .where('undo_of', 'is', null)
      .execute();
    await requestDryRun(db, boss, base.id, data.trigger);
    return 'done';
  }
  // The sync's running logs, runs and undos alike, in one round trip.
  const runningLogs = await db
    .selectFrom('sync_log')
    .select(['id', 'undo_of', 'started_at'])
    .where('core_base_id', '=', base.id)
    .where('status', '=', 'running')
    .orderBy('started_at', 'desc')
    .execute();
  // An undo is a run of its own (jobs/undo-run.ts), never continued or ended by a sync run.
  const running = runningLogs.find((l) => l.undo_of === null);
  // An undo of one of this sync's runs writes its links and shadows (jobs/undo-run.ts): a new run
  // starts after it. (A run already under way goes on; the undo waits for it.) A recent undo only,
  // so one left behind by a dead process holds nothing up for long.
  const undoUnderWay = runningLogs.some(
    (l) => l.undo_of !== null && l.started_at.getTime() > Date.now() - UNDO_HOLDS_RUNS_MS,
  );
  if (!running && undoUnderWay) {
    await boss.send(SYNC_RUN, { coreBaseId: base.id, trigger: data.trigger } satisfies SyncRunData, {
      singletonKey: base.id,
      startAfter: UNDO_WAIT_SECONDS,
    });
    return 'done';
  }
  const log =
    running ??
    (await db
      .insertInto('sync_log')
      .values({ owner_id: base.owner_id, core_base_id: base.id, trigger: data.trigger, counts: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow());
  const { result, error, recheckSoon } = await runner.runChunk({
    coreBaseId: base.id,
    syncLogId: log.id,
    trigger: data.trigger,
  });
  // The apps answered (whatever the result): an outage the user was told of is over.
  await resolveOutageIssues(db, base.id);
  if (result === 'more_work') {
    // The next chunk is a job of its own, unless the caller drives the chunks (a preview's apply).
    if (options.chain === false) return result;
    await boss.send(SYNC_RUN, { coreBaseId: base.id, trigger: data.trigger } satisfies SyncRunData, {
      singletonKey: base.id,
    });
    return result;
  }
  const now = new Date();
  // The log closed and, for a run that is done, the sync's last sync time: one statement.
  await sql`with closed as (
      update sync_log set status = ${result === 'done' ? 'done' : 'failed'}, finished_at = ${now},
        error = ${error ?? null} where id = ${log.id}::uuid returning core_base_id)
    update core_base set last_sync_time = ${now}
      where ${result === 'done'} and id = (select core_base_id from closed)`.execute(db);
  // Webhooks out: the one place a run's events are made, once its log is closed. A failure here
  // must not fail (and so repeat) a run that is done.
  await emitRunEvents(db, boss, log.id).catch((e: unknown) =>
    console.error(`webhooks for run ${log.id} not queued: ${e instanceof Error ? e.message : String(e)}`),
  );
  // Nothing may wake us when the transaction holding them back ends (it may write elsewhere).
  if (recheckSoon)
    await boss.send(SYNC_RUN, { coreBaseId: base.id, trigger: 'recheck' } satisfies SyncRunData, {
      singletonKey: base.id,
      startAfter: RECHECK_SECONDS,
    });
  return result;
}

const UNDO_WAIT_SECONDS = 2;
const UNDO_HOLDS_RUNS_MS = 10 * 60 * 1000;

/** A worker that dies mid-run stops its heartbeat; pg-boss then fails the job and retries it elsewhere. */
export const RUN_HEARTBEAT_SECONDS = Math.max(
  10,
  Number(process.env.LOCKSTEP_RUN_HEARTBEAT_SECONDS ?? 20) || 20,
);

/** Attempts of a run chunk after its first, with backoff from 5 s to 300 s (about 2.5 min in all). */
const RUN_RETRY_LIMIT = 5;

/** Sync runs one worker process carries at once (`LOCKSTEP_WORKER_CONCURRENCY`, 4 by default). */
export const RUN_CONCURRENCY = Math.max(1, Number(process.env.LOCKSTEP_WORKER_CONCURRENCY ?? 4) || 4);

/** A dead worker's run: its job cancelled and the sync queued again (it resumes the running log). */
export async function takeOverRun(boss: PgBoss, jobId: string, coreBaseId: string) {
  await boss.cancel(SYNC_RUN, jobId).catch(() => {});
  await requestSyncRun(boss, coreBaseId, 'resume', PRIORITY.user);
}

export async function registerSyncRun(
  boss: PgBoss,
  deps: { db: Db; runner: SyncRunner; runWorkers: boolean; liveness?: WorkerLiveness },
) {
  await boss.createQueue(SYNC_RUN, {
    policy: 'stately',
    retryLimit: RUN_RETRY_LIMIT,
    retryDelay: 5,
    retryBackoff: true,
    retryDelayMax: 300,
    expireInSeconds: 15 * 60,
    heartbeatSeconds: RUN_HEARTBEAT_SECONDS,
    // Real time: a queued run wakes a worker at once (pg-boss NOTIFY) rather than at its next poll.
    notify: true,
  });
  // Installs made before heartbeats existed get them too (createQueue leaves a queue as it is).
  await boss.updateQueue(SYNC_RUN, { heartbeatSeconds: RUN_HEARTBEAT_SECONDS, notify: true });
  if (!deps.runWorkers) return;
  // NOTIFY wakes the worker for new jobs; retries coming due (a delay, no NOTIFY) are still found by
  // the usual 2 s poll, not pg-boss's relaxed 30 s backstop for notify-enabled queues.
  // Several runs at once per process (different syncs; one sync's runs stay one at a time by the
  // stately policy): a worker loop that finishes a job waits for its next poll unless a NOTIFY came
  // in meanwhile, so with one loop a backlog of queued syncs was served one per 2 s.
  await boss.work<SyncRunData>(
    SYNC_RUN,
    { batchSize: 1, notifyPollingIntervalSeconds: 2, localConcurrency: RUN_CONCURRENCY },
    async (jobs) => {
      for (const job of jobs) {
        try {
          // Without a claim the run is still carried; only its fast takeover is lost (a dead
          // worker's run then waits for the queue's heartbeat), so a claim that fails under load
          // (a pool connect timeout) is tried again before giving up on it.
          if (deps.liveness) await claimWithRetries(deps.liveness, job.id, job.data.coreBaseId);
          await handleSyncRun(deps.db, boss, deps.runner, job.data);
          await deps.liveness?.release(job.id);
        } catch (error) {
          await deps.liveness?.release(job.id).catch(() => {});
          // Thrown means transient: pg-boss retries with backoff; say why in the log.
          console.error(
            `sync-run ${job.data.coreBaseId} failed, will retry: ${error instanceof Error ? error.message : String(error)}`,
          );
          // Failing again after a retry is no blip: the user is told (one issue per sync).
          if (job.retryCount >= 1)
            await raiseOutageIssue(deps.db, job.data.coreBaseId, error).catch(() => {});
          // The last attempt ends the run now, not when the reaper finds it 30 minutes later.
          if (job.retryCount >= RUN_RETRY_LIMIT)
            await failRunningLog(deps.db, boss, job.data.coreBaseId, error);
          throw error;
        }
      }
    },
  );
}

async function claimWithRetries(liveness: WorkerLiveness, jobId: string, coreBaseId: string) {
  for (let attempt = 1; attempt <= 4; attempt++) {
    try {
      await liveness.claim(jobId, coreBaseId);
      return;
    } catch (error) {
      if (attempt === 4)
        console.error(
          `sync-run ${coreBaseId}: could not record which worker carries it (${error instanceof Error ? error.message : String(error)}); a crash now is noticed at the queue's heartbeat`,
        );
      else await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/** Marks the sync's running log failed with why (the queue gave up on its chunk). */
async function failRunningLog(db: Db, boss: PgBoss, coreBaseId: string, error: unknown) {
  const why = error instanceof ConnectorError ? error.userFacingMessage : 'The run kept failing.';
  const ended = await db
    .updateTable('sync_log')
    .set({
      status: 'failed',
      finished_at: new Date(),
      error: `${why} Gave up after retries; the next run tries again.`,
    })
    .where('core_base_id', '=', coreBaseId)
    .where('status', '=', 'running')
    // An undo is a run of its own (jobs/undo-run.ts), never continued or ended by a sync run.
    .where('undo_of', 'is', null)
    .returning('id')
    .execute();
  // The run's webhooks (sync.run.finished, failed), as handleSyncRun sends for a run that ends itself.
  for (const { id } of ended) await emitRunEvents(db, boss, id).catch(() => {});
}
