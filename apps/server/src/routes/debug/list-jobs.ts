import { IsoTimestamp, NIL_ID, Paged, PageQuery, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp, requireStaff } from '../../http/context';
import { findExternalBase } from '../../services/external-bases';
import { JOB_STATES, listJobsOfSync } from '../../services/job-viewer';

export const JobView = z.object({
  id: Uuid,
  name: z.string(),
  state: z.enum(JOB_STATES),
  data: z.unknown(),
  retryCount: z.number().int(),
  retryLimit: z.number().int(),
  output: z.unknown(),
  priority: z.number().int(),
  singletonKey: z.string().nullable(),
  createdOn: IsoTimestamp,
  startAfter: IsoTimestamp,
  startedOn: IsoTimestamp.nullable(),
  completedOn: IsoTimestamp.nullable(),
  durationMs: z.number().int().nullable(),
});

/**
 * The job viewer: the pg-boss jobs of one sync, found from one of its connected apps (the page's
 * `externalBaseId`), with their data, attempts, output (the error of a failed one) and timing. A user
 * sees the jobs of their own syncs, staff any; the nil id (staff) lists the jobs of no sync.
 */
export function listJobs(app: RestApp, ctx: AppContext) {
  app.get(
    '/debug/jobs',
    {
      schema: {
        tags: ['debug'],
        summary:
          "The job queue's jobs of one sync (by one of its connected apps): data, attempts, errors and timing, newest first (the owner or staff; the nil id lists jobs of no sync, staff only)",
        querystring: PageQuery.extend({
          externalBaseId: z.string().uuid('must be a connected app id (a UUID)'),
          state: z.enum(JOB_STATES).optional(),
        }),
        response: {
          200: Paged(JobView).extend({
            coreBaseId: Uuid,
            byState: z.record(z.enum(JOB_STATES), z.number().int()),
          }),
        },
      },
    },
    async (request) => {
      const { externalBaseId, state, skip, take } = request.query;
      let coreBaseId: string = NIL_ID;
      if (externalBaseId === NIL_ID) requireStaff(request);
      else coreBaseId = (await findExternalBase(ctx.db, principalOf(request), externalBaseId)).core_base_id;
      const page = await listJobsOfSync(ctx.db, coreBaseId, { state, skip, take });
      return { ...page, skip, take, coreBaseId };
    },
  );
}
