import { randomInt } from 'node:crypto';
import { DropTolerantClient } from '@lockstep/connectors/postgresql';
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';

/** Advisory lock class of worker liveness locks (the key is the worker's). */
export const LIVENESS_CLASS = 7_311_001;
/** How often the reaper looks for runs whose worker died. */
const REAP_EVERY_MS = 300;
/**
 * A worker seen without its lock twice this long apart is dead: a live one whose lock connection was
 * cut takes the lock again within ~0.2 s (reconnect after 0.1 s).
 */
const DEAD_CONFIRM_MS = 700;

/** How often rows of worker processes no longer alive are deleted. */
const PRUNE_EVERY_MS = 30_000;

/** Worker keys whose liveness lock is held now, in this database (pg_locks lists every database's). */
const liveLocks = () => sql`(select objid::text::bigint as worker_key from pg_locks
  where locktype = 'advisory' and classid = ${LIVENESS_CLASS} and objsubid = 2 and granted
    and database = (select oid from pg_database where datname = current_database()))`;

/**
 * Active jobs of the queue that no process claimed and that started before every live worker did:
 * the process that fetched them is gone (a live one registered before its first fetch). Without a
 * live worker nothing is orphaned (min is null): nobody could take the job over anyway.
 */
async function orphanedJobs(db: Db, queue: string) {
  return (
    await sql<{
      job_id: string;
      core_base_id: string;
    }>`select j.id::text as job_id, j.data->>'coreBaseId' as core_base_id
      from pgboss.job j
      where j.name = ${queue} and j.state = 'active' and j.data ? 'coreBaseId'
        and not exists (select 1 from run_claim c where c.job_id = j.id)
        and j.started_on < (select min(w.started_at) from worker_process w
          where w.worker_key in (select worker_key from ${liveLocks()} l))`.execute(db)
  ).rows;
}

export type WorkerLiveness = {
  key: number;
  /** Records that this process carries the job (until `release`). */
  claim(jobId: string, coreBaseId: string): Promise<void>;
  release(jobId: string): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Tells in seconds that a worker process died, so its sync runs are taken over at once instead of
 * after a missed queue heartbeat (at least 10 s, then the supervisor's interval: ~25 s, while edits
 * pile up). Each worker holds a session advisory lock on a connection of its own: PostgreSQL drops
 * it the moment the process dies (the socket closes), while a process that is merely busy (a long
 * reconcile blocking its event loop) keeps it, which a timer-based lease would not. A lock seen free
 * twice, 0.7 s apart (a worker whose lock connection was cut takes it again within ~0.2 s), marks
 * the worker dead: its runs are cancelled in the queue and queued again, to resume from what they
 * recorded. A process that died after fetching a job and before claiming it leaves no claim: that
 * job is found as one older than every live worker (orphanedJobs), and taken over the same way.
 */
export async function startWorkerLiveness(deps: {
  db: Db;
  boss: PgBoss;
  databaseUrl: string;
  /** The queue whose active jobs this process claims (sync-run). */
  queue: string;
  /** Cancels a dead worker's job and queues the sync again. */
  takeOver: (jobId: string, coreBaseId: string) => Promise<void>;
  log?: (line: string) => void;
}): Promise<WorkerLiveness> {
  const key = randomInt(1, 2 ** 31 - 1);
  let stopped = false;
  let holder: DropTolerantClient | null = null;
  /** When this process registered (database clock): kept across lock reconnects. */
  let startedAt: Date | null = null;

  async function hold(): Promise<void> {
    const client = new DropTolerantClient({
      connectionString: deps.databaseUrl,
      application_name: 'lockstep-liveness',
    });
    client.on('end', () => {
      if (holder === client) holder = null;
      if (!stopped) setTimeout(() => void hold().catch(() => retry()), 100).unref();
    });
    await client.connect();
    await client.query('select pg_advisory_lock($1, $2)', [LIVENESS_CLASS, key]);
    holder = client;
    // Registered before this process fetches any job (boot starts the workers after this), so
    // every job it fetches started after `started_at`. Again after a reconnect, in case a reaper
    // pruned the row while the lock was free.
    const row = (
      await sql<{ started_at: Date }>`insert into worker_process (worker_key, started_at)
        values (${key}, coalesce(${startedAt}::timestamptz, now()))
        on conflict (worker_key) do update set started_at = worker_process.started_at
        returning started_at`.execute(deps.db)
    ).rows[0];
    startedAt = row?.started_at ?? startedAt;
  }
  function retry() {
    if (!stopped) setTimeout(() => void hold().catch(() => retry()), 1_000).unref();
  }
  await hold();

  /** When each other worker was first seen without its lock (this process's view). */
  const suspects = new Map<number, number>();
  /** When each unclaimed job was first seen older than every live worker. */
  const orphanSuspects = new Map<string, number>();
  let lastPrune = 0;
  let reaping = false;
  async function reap() {
    if (reaping || stopped) return;
    reaping = true;
    try {
      const workers = (
        await sql<{
          worker_key: number;
        }>`select distinct worker_key from run_claim where worker_key <> ${key}`.execute(deps.db)
      ).rows.map((r) => r.worker_key);
      for (const worker of workers) {
        // Taken and given back in one statement, on one session (CASE keeps the order).
        const free = (
          await sql<{ free: boolean }>`select case when pg_try_advisory_lock(${LIVENESS_CLASS}, ${worker})
              then pg_advisory_unlock(${LIVENESS_CLASS}, ${worker}) else false end as free`.execute(deps.db)
        ).rows[0]?.free;
        if (!free) {
          suspects.delete(worker);
          continue;
        }
        const since = suspects.get(worker);
        if (since === undefined) {
          suspects.set(worker, Date.now());
          continue;
        }
        if (Date.now() - since < DEAD_CONFIRM_MS) continue;
        suspects.delete(worker);
        const taken = (
          await sql<{
            job_id: string;
            core_base_id: string;
          }>`delete from run_claim where worker_key = ${worker}
            returning job_id, core_base_id`.execute(deps.db)
        ).rows;
        for (const t of taken) {
          deps.log?.(`worker ${worker} died; its run of ${t.core_base_id} is resumed`);
          await deps.takeOver(t.job_id, t.core_base_id);
        }
      }
    } catch (error) {
      deps.log?.(`run reaper: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      await takeOverOrphans();
    } catch (error) {
      deps.log?.(`run reaper, unclaimed jobs: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      reaping = false;
    }
  }
  /**
   * Jobs whose process died between fetching and claiming them. Seen twice, 0.7 s apart, like a
   * dead worker: a live worker whose lock connection was cut drops out of the live set for ~0.2 s,
   * and the jobs it fetched must not look orphaned meanwhile.
   */
  async function takeOverOrphans() {
    const now = Date.now();
    if (now - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = now;
      await sql`delete from worker_process w where not exists (select 1 from ${liveLocks()} l where l.worker_key = w.worker_key)`.execute(
        deps.db,
      );
    }
    const orphans = await orphanedJobs(deps.db, deps.queue);
    const seen = new Set(orphans.map((o) => o.job_id));
    for (const id of orphanSuspects.keys()) if (!seen.has(id)) orphanSuspects.delete(id);
    for (const o of orphans) {
      const since = orphanSuspects.get(o.job_id);
      if (since === undefined) {
        orphanSuspects.set(o.job_id, now);
        continue;
      }
      if (now - since < DEAD_CONFIRM_MS) continue;
      orphanSuspects.delete(o.job_id);
      deps.log?.(
        `the worker that fetched run ${o.job_id} of ${o.core_base_id} died before claiming it; resumed`,
      );
      await deps.takeOver(o.job_id, o.core_base_id);
    }
  }

  const timer = setInterval(() => void reap(), REAP_EVERY_MS);
  timer.unref();
  // At once too: a worker started to replace a dead one looks at its runs right away.
  void reap();

  return {
    key,
    async claim(jobId, coreBaseId) {
      await sql`insert into run_claim (job_id, core_base_id, worker_key) values (${jobId}::uuid, ${coreBaseId}::uuid, ${key})
        on conflict (job_id) do update set worker_key = excluded.worker_key, claimed_at = now()`.execute(
        deps.db,
      );
    },
    async release(jobId) {
      await sql`delete from run_claim where job_id = ${jobId}::uuid`.execute(deps.db);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await sql`delete from worker_process where worker_key = ${key}`.execute(deps.db).catch(() => {});
      const last = holder;
      holder = null;
      await last?.end().catch(() => {});
    },
  };
}
