import { DEV_PLAN, type PlanGatedAction, type Subscription, syncPermission } from '@lockstep/contract';
import type { Db } from '../db/database';
import { HttpError } from '../http/http-error';
import { limitDataOf, subscriptionOf } from './subscriptions';

/**
 * The subscription and limits a user works under: on a local server (the embedded default) a user
 * without a plan works on the dev plan, as the web app's local dev mode shows it.
 */
export async function effectivePlan(db: Db, userId: string, localDevPlan = false) {
  let subscription: Subscription = await subscriptionOf(db, userId);
  let limits = await limitDataOf(db, userId, subscription);
  if (subscription.status === 'none' && localDevPlan) {
    subscription = {
      status: 'active',
      daysRemaining: DEV_PLAN.daysRemaining,
      planDisplayName: DEV_PLAN.displayName,
      productType: null,
    };
    limits = {
      ...limits,
      baseLimit: DEV_PLAN.baseLimit,
      recordLimit: limits.recordLimit > 0 ? limits.recordLimit : DEV_PLAN.fallbackRecordLimit,
    };
  }
  return { subscription, limits };
}

/**
 * Enforces spec sections 4-6 on the server: throws 402 with the reason when the plan does not allow
 * it. On a local server (the embedded default) a user without a plan works on the dev plan, as the
 * web app's local dev mode shows it, so `npm start` can be tried without choosing a plan.
 */
export async function assertPlanAllows(
  db: Db,
  userId: string,
  action: PlanGatedAction,
  localDevPlan = false,
): Promise<void> {
  const { subscription, limits } = await effectivePlan(db, userId, localDevPlan);
  const permission = syncPermission(action, subscription, limits);
  if (!permission.allowed)
    throw new HttpError(402, `Plan does not allow: ${action}`, permission.reason, 'plan_limit');
}
