import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { AppContext } from '../http/context';
import { type RunData, runApiImport } from '../services/api-import/run-import';
import { createProgress } from '../services/progress';

export const API_IMPORT_RUN = 'api-import-run';
export const SCHEDULE_API_IMPORTS = 'schedule-api-imports';

/**
 * Queues one run of an import with a progress tracker; the import shows as queued until a worker
 * takes it. Answers the tracker's id, or null when a run of it is already queued or running.
 */
export async function queueApiImportRun(db: Db, boss: PgBoss, row: { id: string; owner_id: string }) {
  const tracker = await createProgress(db, row.owner_id, 'api-import');
  // One run of an import at a time: a second request while one waits is the same run.
  const jobId = await boss.send(
    API_IMPORT_RUN,
    { importId: row.id, trackingId: tracker.id } satisfies RunData,
    {
      singletonKey: row.id,
    },
  );
  if (jobId === null) {
    await db.deleteFrom('progress_tracker').where('id', '=', tracker.id).execute();
    return null;
  }
  await db
    .updateTable('api_import')
    .set({ last_run_status: 'queued', last_tracking_id: tracker.id, updated_at: new Date() })
    .where('id', '=', row.id)
    .execute();
  return tracker.id;
}

/**
 * Every five minutes: a run for each scheduled import whose interval (an hour, a day) has passed
 * since its last run began (the queue refuses a second run of one already queued or running).
 * Answers how many were queued.
 */
export async function scheduleApiImports(db: Db, boss: PgBoss, now = new Date()): Promise<number> {
  const due = await db
    .selectFrom('api_import')
    .select(['id', 'owner_id'])
    .where('schedule', '<>', 'none')
    .where((eb) =>
      eb.or([
        eb('last_run_at', 'is', null),
        eb(
          'last_run_at',
          '<=',
          sql<Date>`${now}::timestamptz - case schedule when 'hourly' then interval '1 hour' else interval '1 day' end`,
        ),
      ]),
    )
    .execute();
  let queued = 0;
  for (const row of due) if (await queueApiImportRun(db, boss, row)) queued++;
  return queued;
}

export async function registerApiImport(boss: PgBoss, ctx: AppContext | null, runWorkers: boolean) {
  // A run reads at most 1,000 pages of 10 s each: an hour is its ceiling.
  // exclusive: one run of an import waiting or running at a time (its singletonKey is the import).
  await boss.createQueue(API_IMPORT_RUN, { policy: 'exclusive', retryLimit: 0, expireInSeconds: 60 * 60 });
  await boss.createQueue(SCHEDULE_API_IMPORTS, { policy: 'singleton' });
  await boss.schedule(SCHEDULE_API_IMPORTS, '*/5 * * * *');
  if (!runWorkers || !ctx) return;
  await boss.work<RunData>(API_IMPORT_RUN, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs) await runApiImport(ctx, job.data);
  });
  await boss.work(SCHEDULE_API_IMPORTS, async () => {
    await scheduleApiImports(ctx.db, boss);
  });
}
