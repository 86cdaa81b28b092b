import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase } from '../../services/core-bases';
import { assertPlanAllows } from '../../services/plan-guard';
import { CoreBaseIdParams } from './params';

export function syncNow(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/sync-now',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Run a sync now, ahead of its schedule (the sync must be on)',
        params: CoreBaseIdParams,
        response: { 202: z.object({ queued: z.boolean() }) },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      if (base.sync_state !== 'on') {
        throw new HttpError(409, 'Sync is off', 'Switch the sync on to run it.', 'conflict');
      }
      await assertPlanAllows(ctx.db, base.owner_id, 'activate', ctx.config.environment === 'local');
      const id = await requestSyncRun(ctx.boss, base.id, 'user', PRIORITY.user);
      // null: a run is already queued; its priority was raised instead.
      return reply.status(202).send({ queued: id !== null });
    },
  );
}
