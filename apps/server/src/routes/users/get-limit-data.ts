import { LimitData } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { effectivePlan } from '../../services/plan-guard';

export function getLimitData(app: RestApp, ctx: AppContext) {
  app.get(
    '/users/limit-data',
    { schema: { tags: ['users'], summary: 'Usage and plan limits', response: { 200: LimitData } } },
    // The limits the server enforces: on a local server a user without a plan works on the dev plan.
    async (request) =>
      (await effectivePlan(ctx.db, principalOf(request).userId, ctx.config.environment === 'local')).limits,
  );
}
