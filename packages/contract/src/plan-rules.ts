import type { LimitData, Subscription } from './users';

/** Spec section 5: reached when baseLimit is not null and baseCount is at or above it. */
export function isBaseLimitReached(limits: LimitData): boolean {
  return limits.baseLimit !== null && limits.baseCount >= limits.baseLimit;
}

/** Spec section 5: reached when recordCount is at or above recordLimit. */
export function isRecordLimitReached(limits: LimitData): boolean {
  return limits.recordCount >= limits.recordLimit;
}

export type PlanGatedAction = 'create' | 'activate' | 'retry';
export type Permission = { allowed: true } | { allowed: false; reason: string };

/**
 * Spec sections 4-6: status none disallows everything; expired disallows creating, activating and
 * retrying syncs; creating also needs room under the base limit, activating and retrying under the record limit.
 */
export function syncPermission(
  action: PlanGatedAction,
  subscription: Subscription | null,
  limits: LimitData | null,
): Permission {
  if (!subscription || !limits || subscription.status === 'none') {
    return { allowed: false, reason: 'Choose a plan to get started.' };
  }
  if (subscription.status === 'expired') {
    return {
      allowed: false,
      reason: `Your ${subscription.planDisplayName} plan has expired. Renew it to ${action} syncs.`,
    };
  }
  if (action === 'create' && isBaseLimitReached(limits)) {
    return {
      allowed: false,
      reason: `Your plan allows ${limits.baseLimit} sync${limits.baseLimit === 1 ? '' : 's'}. Upgrade your plan or delete a sync to create another.`,
    };
  }
  if (action !== 'create' && isRecordLimitReached(limits)) {
    return {
      allowed: false,
      reason: `Your plan's record limit of ${limits.recordLimit.toLocaleString('en-US')} is reached. Upgrade your plan to sync more records.`,
    };
  }
  return { allowed: true };
}
