import { PlanList } from '@lockstep/contract';
import type { AppContext, RestApp } from '../../http/context';
import { planSummaries } from '../../services/subscriptions';

/** Every plan and its limits, as this server enforces them (the plan page lists them). */
export function listPlans(app: RestApp, ctx: AppContext) {
  app.get(
    '/plans',
    { schema: { tags: ['users'], summary: 'Every plan and its limits', response: { 200: PlanList } } },
    async () => ({ items: planSummaries(ctx.config.historyRetentionDays) }),
  );
}
