import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findExternalBase } from '../../services/external-bases';
import { ExternalBaseParams } from './params';

export function bumpRecurringJobPriority(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-bases/:id/bump-recurring-job-priority/:priority',
    {
      schema: {
        tags: ['external-bases'],
        summary: "Run this app's sync ahead of the schedule, with a priority from 1 (schedule) to 20 (user)",
        params: ExternalBaseParams.extend({ priority: z.coerce.number().int().min(1).max(PRIORITY.user) }),
        response: { 202: z.object({ queued: z.boolean() }) },
      },
    },
    async (request, reply) => {
      const base = await findExternalBase(ctx.db, principalOf(request), request.params.id);
      const id = await requestSyncRun(ctx.boss, base.core_base_id, 'bump', request.params.priority);
      return reply.status(202).send({ queued: id !== null });
    },
  );
}
