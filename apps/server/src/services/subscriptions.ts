import {
  type LimitData,
  NO_PLAN_DISPLAY_NAME,
  PLAN_TIER_NAMES,
  PLAN_TIERS,
  type PlanSummary,
  type PlanTier,
  type Subscription,
  tierOfProductType,
} from '@lockstep/contract';
import type { Db } from '../db/database';

const DAY_MS = 24 * 60 * 60 * 1000;

export const NO_SUBSCRIPTION: Subscription = {
  status: 'none',
  daysRemaining: null,
  planDisplayName: NO_PLAN_DISPLAY_NAME,
  productType: null,
};

/**
 * The user's current subscription: the latest one (rows of status 'incomplete', a checkout begun,
 * grant nothing), expired when its end has passed or it was canceled. A subscription paid through
 * Stripe (services/billing.ts) counts its days to the renewal date, or to the end of a canceled one
 * or of a failed payment's grace period.
 */
export async function subscriptionOf(db: Db, userId: string, now = new Date()): Promise<Subscription> {
  const row = await db
    .selectFrom('subscription')
    .select([
      'product_type',
      'status',
      'expires_at',
      'stripe_subscription_id',
      'current_period_end',
      'cancel_at_period_end',
    ])
    .where('user_id', '=', userId)
    .where('status', '!=', 'incomplete')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return NO_SUBSCRIPTION;
  const tier = tierOfProductType(row.product_type);
  // A product type we no longer know gives no limits, so it cannot grant anything.
  if (!tier) return NO_SUBSCRIPTION;
  const expiresAt = row.expires_at ? new Date(row.expires_at) : null;
  const expired = row.status === 'canceled' || (expiresAt !== null && expiresAt.getTime() <= now.getTime());
  const billed = row.stripe_subscription_id !== null;
  const shownEnd =
    billed && row.status !== 'past_due' && !row.cancel_at_period_end && row.current_period_end
      ? new Date(row.current_period_end)
      : expiresAt;
  return {
    status: expired
      ? 'expired'
      : row.status === 'trialing' || row.status === 'past_due'
        ? row.status
        : 'active',
    daysRemaining: shownEnd ? Math.max(0, Math.ceil((shownEnd.getTime() - now.getTime()) / DAY_MS)) : null,
    planDisplayName: PLAN_TIERS[tier].displayName,
    productType: row.product_type,
    ...(billed ? { billedByStripe: true, cancelAtPeriodEnd: row.cancel_at_period_end } : {}),
  };
}

/** Limits of a subscription: none and expired have limits of 0 (spec section 4). */
export function limitsOf(subscription: Subscription): Pick<LimitData, 'baseLimit' | 'recordLimit'> {
  const tier = subscription.productType ? tierOfProductType(subscription.productType) : null;
  if (subscription.status === 'none' || subscription.status === 'expired' || !tier) {
    return { baseLimit: 0, recordLimit: 0 };
  }
  return { baseLimit: PLAN_TIERS[tier].baseLimit, recordLimit: PLAN_TIERS[tier].recordLimit };
}

/** Usage and limits; each synced record (a core meta record) counts once. */
export async function limitDataOf(db: Db, userId: string, subscription?: Subscription): Promise<LimitData> {
  const sub = subscription ?? (await subscriptionOf(db, userId));
  const [bases, records] = await Promise.all([
    db
      .selectFrom('core_base')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', userId)
      .executeTakeFirstOrThrow(),
    // Kept by triggers on core_meta_record (migration 0008): no count over every link.
    db.selectFrom('owner_record_count').select('n').where('owner_id', '=', userId).executeTakeFirst(),
  ]);
  return { baseCount: Number(bases.n), recordCount: Number(records?.n ?? 0), ...limitsOf(sub) };
}

/** Gives a user a plan from now on; `days` null means it runs until changed. */
export async function assignPlan(
  db: Db,
  userId: string,
  productType: string,
  options: { days: number | null; status: 'active' | 'trialing' },
): Promise<void> {
  const expiresAt = options.days === null ? null : new Date(Date.now() + options.days * DAY_MS);
  await db
    .insertInto('subscription')
    .values({ user_id: userId, product_type: productType, status: options.status, expires_at: expiresAt })
    .execute();
}

/**
 * Days of sync history (runs with their operations, trace events, resolved issues) each plan keeps;
 * jobs/prune-history.ts deletes what is older. Kept here, not in the contract's plan table, because
 * only the server acts on it.
 */
export const HISTORY_RETENTION_DAYS = {
  personal: 30,
  solo: 30,
  starter: 30,
  plus: 30,
  project: 30,
  startup: 30,
  pro: 90,
  growth: 90,
  professional: 90,
  business: 90,
  operator: 90,
  enterprise: 90,
} as const satisfies Record<PlanTier, number>;
/** No plan, or an expired one (the free level). */
export const NO_PLAN_HISTORY_RETENTION_DAYS = 7;
/** The dev plan of a local server (a user without a plan there). */
export const DEV_PLAN_HISTORY_RETENTION_DAYS = 30;

/** Days of history a subscription keeps; `devPlan` when the user works on a local server's dev plan. */
export function historyRetentionDaysOf(subscription: Subscription, devPlan = false): number {
  if (subscription.status === 'none' && devPlan) return DEV_PLAN_HISTORY_RETENTION_DAYS;
  const tier = subscription.productType ? tierOfProductType(subscription.productType) : null;
  if (subscription.status === 'none' || subscription.status === 'expired' || !tier) {
    return NO_PLAN_HISTORY_RETENTION_DAYS;
  }
  return HISTORY_RETENTION_DAYS[tier];
}

/**
 * Every plan with the limits this server enforces: the tier table, and the history each keeps
 * (`retentionDays`, LOCKSTEP_HISTORY_RETENTION_DAYS, is one retention for everyone when set).
 */
export function planSummaries(retentionDays?: number): PlanSummary[] {
  return PLAN_TIER_NAMES.map((tier) => {
    const plan = PLAN_TIERS[tier];
    return {
      tier,
      displayName: plan.displayName,
      baseLimit: plan.baseLimit,
      recordLimit: plan.recordLimit,
      pollIntervalSeconds: plan.pollIntervalSeconds,
      historyRetentionDays: retentionDays ?? HISTORY_RETENTION_DAYS[tier],
    };
  });
}
