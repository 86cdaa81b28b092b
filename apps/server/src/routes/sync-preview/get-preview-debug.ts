import { SyncPreview } from '@lockstep/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { listJobsOfPreview } from '../../services/job-viewer';
import { findSyncPreview, toSyncPreview } from '../../services/sync-previews';
import { JobView } from '../debug/list-jobs';
import { PreviewParams } from './params';

const Count = z.object({ key: z.string(), n: z.number().int() });

/**
 * Everything a staff member looks at when a preview misbehaves: the preview with its internals
 * (where each table's download ended, the keys it matched on, who asked for it), its progress
 * tracker, what it downloaded and planned, its problems by kind, and its step jobs on the queue.
 */
export function getPreviewDebug(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id/debug',
    {
      config: { staff: true },
      schema: {
        tags: ['sync-preview', 'debug', 'staff'],
        summary:
          "One preview's internals: cursors, match keys, who asked, its tracker, records by side and plan, problems by kind, and its step jobs (staff)",
        params: PreviewParams,
        response: {
          200: z.object({
            preview: SyncPreview.extend({ ownerId: z.string(), requestedBy: z.string().nullable() }),
            cursors: z.record(z.string(), z.string()).nullable(),
            keyedOn: z.record(z.string(), z.string()).nullable(),
            tracker: z
              .object({
                status: z.string(),
                done: z.number().int(),
                total: z.number().int().nullable(),
                message: z.string().nullable(),
              })
              .nullable(),
            recordsBySide: z.array(Count),
            recordsByPlan: z.array(Count),
            pairs: z.number().int(),
            problemsByKind: z.array(Count),
            jobs: z.array(JobView),
          }),
        },
      },
    },
    async (request) => {
      const staff = requireStaff(request);
      const row = await findSyncPreview(ctx.db, staff, request.params.id);
      const count = (column: 'side' | 'plan') =>
        ctx.db
          .selectFrom('sync_preview_record')
          .select([sql<string>`coalesce(${sql.ref(column)}::text, 'none')`.as('key')])
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('sync_preview_id', '=', row.id)
          .groupBy(column)
          .orderBy('key')
          .execute();
      const [tracker, bySide, byPlan, pairs, problems, jobs] = await Promise.all([
        row.tracking_id
          ? ctx.db
              .selectFrom('progress_tracker')
              .select(['status', 'done', 'total', 'message'])
              .where('id', '=', row.tracking_id)
              .executeTakeFirst()
          : undefined,
        count('side'),
        count('plan'),
        ctx.db
          .selectFrom('sync_preview_pair')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('sync_preview_id', '=', row.id)
          .executeTakeFirstOrThrow(),
        ctx.db
          .selectFrom('sync_preview_problem')
          .select(['kind as key'])
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('sync_preview_id', '=', row.id)
          .groupBy('kind')
          .orderBy('kind')
          .execute(),
        listJobsOfPreview(ctx.db, row.id),
      ]);
      const counts = (rows: { key: string; n: number | string }[]) =>
        rows.map((r) => ({ key: r.key, n: Number(r.n) }));
      return {
        preview: { ...toSyncPreview(row), ownerId: row.owner_id, requestedBy: row.requested_by },
        cursors: row.cursors,
        keyedOn: row.keyed_on,
        tracker: tracker
          ? {
              status: tracker.status,
              done: Number(tracker.done),
              total: tracker.total === null ? null : Number(tracker.total),
              message: tracker.message,
            }
          : null,
        recordsBySide: counts(bySide),
        recordsByPlan: counts(byPlan),
        pairs: Number(pairs.n),
        problemsByKind: counts(problems),
        jobs,
      };
    },
  );
}
