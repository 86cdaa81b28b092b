import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { clearPlan } from '../../services/dry-runs';
import { CoreBaseIdParams } from './params';

export function discardDryRun(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/dry-run/discard',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Discard the plan; dry-run mode stays as it is',
        description:
          'Nothing is lost: the changes still wait in the apps and show again in the next dry pass (or are written by the next real run once dry-run mode is off).',
        params: CoreBaseIdParams,
        response: { 200: z.object({ discarded: z.number().int() }) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      return { discarded: await clearPlan(ctx.db, base.id, 'discarded') };
    },
  );
}
