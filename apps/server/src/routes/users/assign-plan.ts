import { AssignPlanBody, Subscription, tierOfProductType } from '@lockstep/contract';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { assignPlan as assign, subscriptionOf } from '../../services/subscriptions';
import { userSummary } from '../../services/users';
import { UserIdParams } from './get-user';

export function unknownPlan(productType: string) {
  return new HttpError(
    400,
    `Unknown product type ${productType}`,
    `"${productType}" is not a plan. Use one of the tiers (for example "pro" or "pro_v2").`,
    'validation',
  );
}

export function assignPlan(app: RestApp, ctx: AppContext) {
  app.post(
    '/users/:id/plan',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: 'Give a user a plan (staff), whether or not payments are set up',
        params: UserIdParams,
        body: AssignPlanBody,
        response: { 200: Subscription },
      },
    },
    async (request) => {
      requireStaff(request);
      const { productType, days } = request.body;
      if (!tierOfProductType(productType)) throw unknownPlan(productType);
      await userSummary(ctx.db, request.params.id); // 404 for an unknown user
      await assign(ctx.db, request.params.id, productType.toLowerCase(), { days, status: 'active' });
      return subscriptionOf(ctx.db, request.params.id);
    },
  );
}
