import { type PlanGatedAction, syncPermission } from '@lockstep/contract';
import type { Db } from '../db/database';
import { HttpError } from '../http/http-error';
import { limitDataOf, subscriptionOf } from './subscriptions';

/** Enforces spec sections 4-6 on the server: throws 402 with the reason when the plan does not allow it. */
export async function assertPlanAllows(db: Db, userId: string, action: PlanGatedAction): Promise<void> {
  const subscription = await subscriptionOf(db, userId);
  const limits = await limitDataOf(db, userId, subscription);
  const permission = syncPermission(action, subscription, limits);
  if (!permission.allowed)
    throw new HttpError(402, `Plan does not allow: ${action}`, permission.reason, 'plan_limit');
}
