import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { historyRetentionDaysOf, subscriptionOf } from '../services/subscriptions';

export const PRUNE_HISTORY = 'prune-history';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows one statement deletes at most: each is a short transaction that holds no lock for long. */
export const PRUNE_BATCH_ROWS = 5000;
/** Runs taken at once; their operations are deleted PRUNE_BATCH_ROWS at a time before the runs. */
const RUNS_PER_BATCH = 500;

export type PruneOptions = {
  /** A user without a plan works on the dev plan (a local server), which keeps more. */
  localDevPlan: boolean;
  /** LOCKSTEP_HISTORY_RETENTION_DAYS: the same retention for everyone, whatever their plan. */
  retentionDays?: number | undefined;
  now?: Date;
  batchRows?: number;
};

export type PruneResult = { runs: number; entries: number; traces: number; issues: number };

/** Runs `statement` (one bounded delete) until it deletes fewer rows than a batch; answers the total. */
async function deleteInBatches(batch: number, statement: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await statement();
    total += n;
    if (n < batch) return total;
  }
}

const deleted = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);

/**
 * Deletes one sync's history older than `cutoff`: its runs with their operations, its trace events,
 * and its resolved issues (open ones stay whatever their age). A run still `running` is kept, and so
 * are the sync's newest run and its newest completed run (without their old operations), because the
 * sync's status label is derived from them ("Active" rather than "Starting up" or "Initial sync").
 */
export async function pruneCoreBaseHistory(
  db: Db,
  coreBaseId: string,
  cutoff: Date,
  batch = PRUNE_BATCH_ROWS,
): Promise<PruneResult> {
  const result: PruneResult = { runs: 0, entries: 0, traces: 0, issues: 0 };
  const anchors = await db
    .selectFrom('core_base as b')
    .where('b.id', '=', coreBaseId)
    .select((eb) => [
      eb
        .selectFrom('sync_log as l')
        .select('l.id')
        .whereRef('l.core_base_id', '=', 'b.id')
        .orderBy('l.started_at', 'desc')
        .limit(1)
        .as('newest'),
      eb
        .selectFrom('sync_log as l')
        .select('l.id')
        .whereRef('l.core_base_id', '=', 'b.id')
        .where('l.status', '=', 'done')
        .orderBy('l.started_at', 'desc')
        .limit(1)
        .as('newest_done'),
    ])
    .executeTakeFirst();
  if (!anchors) return result; // deleted meanwhile (its history went with it)
  const keep = [anchors.newest, anchors.newest_done].filter((id): id is string => id !== null);

  const deleteEntriesOf = (runIds: string[]) =>
    deleteInBatches(batch, async () =>
      deleted(
        await db
          .deleteFrom('sync_log_entry')
          .where(
            'id',
            'in',
            db.selectFrom('sync_log_entry').select('id').where('sync_log_id', 'in', runIds).limit(batch),
          )
          .executeTakeFirst(),
      ),
    );

  for (;;) {
    let q = db
      .selectFrom('sync_log')
      .select('id')
      .where('core_base_id', '=', coreBaseId)
      .where('started_at', '<', cutoff)
      .where('status', '!=', 'running');
    if (keep.length > 0) q = q.where('id', 'not in', keep);
    const runs = (await q.orderBy('started_at').limit(RUNS_PER_BATCH).execute()).map((r) => r.id);
    if (runs.length === 0) break;
    // The operations first, a batch at a time: the runs' cascade would delete them all at once.
    result.entries += await deleteEntriesOf(runs);
    result.runs += deleted(
      await db
        .deleteFrom('sync_log')
        .where('id', 'in', runs)
        .where('status', '!=', 'running')
        .executeTakeFirst(),
    );
    if (runs.length < RUNS_PER_BATCH) break;
  }
  // The kept runs' own old operations go too, unless the run is still going.
  const oldKept =
    keep.length === 0
      ? []
      : await db
          .selectFrom('sync_log')
          .select('id')
          .where('id', 'in', keep)
          .where('started_at', '<', cutoff)
          .where('status', '!=', 'running')
          .execute();
  if (oldKept.length > 0) result.entries += await deleteEntriesOf(oldKept.map((r) => r.id));

  result.traces += await deleteInBatches(batch, async () =>
    deleted(
      await db
        .deleteFrom('trace_log')
        .where(
          'id',
          'in',
          db
            .selectFrom('trace_log')
            .select('id')
            .where('core_base_id', '=', coreBaseId)
            .where('created_at', '<', cutoff)
            .limit(batch),
        )
        .executeTakeFirst(),
    ),
  );
  result.issues += await deleteInBatches(batch, async () =>
    deleted(
      await db
        .deleteFrom('sync_error')
        .where(
          'id',
          'in',
          db
            .selectFrom('sync_error')
            .select('id')
            .where('core_base_id', '=', coreBaseId)
            .where('status', '=', 'resolved')
            .where('updated_at', '<', cutoff)
            .limit(batch),
        )
        .executeTakeFirst(),
    ),
  );
  return result;
}

/**
 * Hourly: every user's sync history older than their plan keeps (HISTORY_RETENTION_DAYS in
 * services/subscriptions.ts, or LOCKSTEP_HISTORY_RETENTION_DAYS for everyone), so Lockstep's own
 * database stops growing with every run. Deletes in batches of PRUNE_BATCH_ROWS rows per statement.
 */
export async function pruneHistory(db: Db, options: PruneOptions): Promise<PruneResult> {
  const now = options.now ?? new Date();
  const batch = options.batchRows ?? PRUNE_BATCH_ROWS;
  const total: PruneResult = { runs: 0, entries: 0, traces: 0, issues: 0 };
  const bases = await db
    .selectFrom('core_base')
    .select(['id', 'owner_id'])
    .orderBy('owner_id')
    .orderBy('id')
    .execute();
  const cutoffs = new Map<string, Date>();
  for (const base of bases) {
    let cutoff = cutoffs.get(base.owner_id);
    if (!cutoff) {
      const days =
        options.retentionDays ??
        historyRetentionDaysOf(await subscriptionOf(db, base.owner_id, now), options.localDevPlan);
      cutoff = new Date(now.getTime() - days * DAY_MS);
      cutoffs.set(base.owner_id, cutoff);
    }
    const r = await pruneCoreBaseHistory(db, base.id, cutoff, batch);
    total.runs += r.runs;
    total.entries += r.entries;
    total.traces += r.traces;
    total.issues += r.issues;
  }
  return total;
}

export async function registerPruneHistory(
  boss: PgBoss,
  db: Db,
  options: Omit<PruneOptions, 'now' | 'batchRows'>,
  runWorkers: boolean,
) {
  // One at a time; a first pass over a large backlog may take a while, and a failed pass is not
  // retried (the next hour's picks up where it stopped).
  await boss.createQueue(PRUNE_HISTORY, { policy: 'singleton', retryLimit: 0, expireInSeconds: 4 * 60 * 60 });
  await boss.schedule(PRUNE_HISTORY, '23 * * * *');
  if (!runWorkers) return;
  await boss.work(PRUNE_HISTORY, async () => {
    const r = await pruneHistory(db, options);
    if (r.runs + r.entries + r.traces + r.issues > 0)
      console.log(
        `prune-history: deleted ${r.runs} runs, ${r.entries} operations, ${r.traces} trace events, ${r.issues} resolved issues`,
      );
  });
}
