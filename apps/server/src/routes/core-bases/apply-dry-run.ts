import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase } from '../../services/core-bases';
import { clearPlan } from '../../services/dry-runs';
import { assertPlanAllows } from '../../services/plan-guard';
import { CoreBaseIdParams } from './params';

export function applyDryRun(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/dry-run/apply',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Apply the reviewed plan: turn dry-run mode off and queue a real run',
        description:
          'The real run reads again from the same place the plan was made from, so it writes what was reviewed plus anything that changed since. The plan is cleared.',
        params: CoreBaseIdParams,
        response: { 202: z.object({ queued: z.boolean() }) },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      if (base.sync_state !== 'on')
        throw new HttpError(409, 'Sync is off', 'Switch the sync on to apply the plan.', 'conflict');
      await assertPlanAllows(ctx.db, base.owner_id, 'activate', ctx.config.environment === 'local');
      await ctx.db
        .updateTable('core_base')
        .set({ dry_run: false, updated_at: new Date() })
        .where('id', '=', base.id)
        .execute();
      await clearPlan(ctx.db, base.id, 'applied');
      const id = await requestSyncRun(ctx.boss, base.id, 'dry-run-apply', PRIORITY.user);
      return reply.status(202).send({ queued: id !== null });
    },
  );
}
