import { Paged, PageQuery, SyncError, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { listJobsOfPreview } from '../../services/job-viewer';
import { toSyncError } from '../../services/sync-errors';
import { findSyncPreview } from '../../services/sync-previews';

/** A preview's statuses after which nothing more happens to it. */
const FINISHED = new Set(['done', 'cancelled', 'applying_failed', 'download_failed', 'planning_problem']);

/**
 * The sync-errors listing of a preview (the spec's /sync-errors/{id}/sync-errors, with a preview's
 * id): the issues its sync raised while the preview was open (from its start to its last change once
 * finished), newest first, with the errors of its failed or retried step jobs.
 */
export function listPreviewSyncErrors(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-errors/:id/sync-errors',
    {
      config: { staff: true },
      schema: {
        tags: ['sync-errors', 'sync-preview', 'staff'],
        summary:
          "A preview's errors: the issues its sync raised while the preview was open, and its failed step jobs' errors (staff; id is a preview id)",
        params: z.object({ id: z.string().uuid('must be a sync preview id (a UUID)') }),
        querystring: PageQuery,
        response: {
          200: Paged(SyncError).extend({
            previewId: Uuid,
            jobErrors: z.array(
              z.object({
                jobId: Uuid,
                step: z.string().nullable(),
                state: z.string(),
                retryCount: z.number().int(),
                error: z.unknown(),
                at: z.string().nullable(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const staff = requireStaff(request);
      const preview = await findSyncPreview(ctx.db, staff, request.params.id);
      const { skip, take } = request.query;
      let q = ctx.db
        .selectFrom('sync_error')
        .where('core_base_id', '=', preview.core_base_id)
        .where('created_at', '>=', preview.created_at);
      if (FINISHED.has(preview.status)) q = q.where('created_at', '<=', preview.updated_at);
      const [rows, total, jobs] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
        listJobsOfPreview(ctx.db, preview.id),
      ]);
      return {
        items: rows.map(toSyncError),
        total: Number(total.n),
        skip,
        take,
        previewId: preview.id,
        jobErrors: jobs
          .filter((j) => j.state === 'failed' || j.state === 'retry')
          .map((j) => ({
            jobId: j.id,
            step:
              typeof (j.data as { step?: unknown })?.step === 'string'
                ? (j.data as { step: string }).step
                : null,
            state: j.state,
            retryCount: j.retryCount,
            error: j.output,
            at: j.completedOn ?? j.startedOn,
          })),
      };
    },
  );
}
