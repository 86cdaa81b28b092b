import { Subscription, tierOfProductType } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { assignPlan, subscriptionOf } from '../../services/subscriptions';
import { unknownPlan } from './assign-plan';

const TRIAL_DAYS = 14;

export function choosePlan(app: RestApp, ctx: AppContext) {
  app.post(
    '/users/current/choose-plan',
    {
      schema: {
        tags: ['users'],
        summary: `Start a ${TRIAL_DAYS}-day trial of a plan (buying one is POST /payment/checkout/{productType})`,
        body: z.strictObject({ productType: z.string().min(1).max(40) }),
        response: { 200: Subscription },
      },
    },
    async (request) => {
      const { userId } = principalOf(request);
      const { productType } = request.body;
      if (!tierOfProductType(productType)) throw unknownPlan(productType);
      const current = await subscriptionOf(ctx.db, userId);
      // One trial per user: after it, a plan is assigned by checkout or by staff.
      if (current.status !== 'none') {
        throw new HttpError(
          409,
          'Plan already chosen',
          'You already have a plan. Manage it on the subscription page.',
          'conflict',
        );
      }
      await assignPlan(ctx.db, userId, productType.toLowerCase(), { days: TRIAL_DAYS, status: 'trialing' });
      return subscriptionOf(ctx.db, userId);
    },
  );
}
