import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { requestDryRun } from '../../jobs/sync-dry-run';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

export function startDryRun(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/dry-run',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'What would the next run do: queue a dry pass of the sync',
        description:
          'Reads every table pair from where the last run left off to the end, reconciles as a run would, and records what it would write (per record: side, kind, fields before and after, conflicts) without writing anything to the apps or moving anything in Lockstep. A new pass replaces the previous plan. Follow it, and read the plan, at GET /rest/core-bases/{id}/dry-run.',
        params: CoreBaseIdParams,
        response: { 202: z.object({ dryRunId: z.string().uuid() }) },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const id = await requestDryRun(ctx.db, ctx.boss, base.id, 'user');
      return reply.status(202).send({ dryRunId: id as string });
    },
  );
}
