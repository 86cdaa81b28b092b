import { type ExperimentFlags, PLAN_GATED_ROUTES, type SubscriptionStatus } from '@lockstep/contract';

export function isPlanGatedPath(pathname: string): boolean {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  return (PLAN_GATED_ROUTES as readonly string[]).includes(path);
}

/**
 * What a plan-gated page shows (spec sections 2 and 4): status none gets the modal that cannot be
 * dismissed; expired keeps the page reachable with a notice that syncs cannot be created,
 * activated or retried.
 */
export function planGateView(pathname: string, status: SubscriptionStatus): 'gate' | 'expired-notice' | null {
  if (!isPlanGatedPath(pathname)) return null;
  if (status === 'none') return 'gate';
  if (status === 'expired') return 'expired-notice';
  return null;
}

/** The SELECT_A_PLAN_URL flag sends Choose Plan to the in-app plan chooser; otherwise to pricing. */
export function choosePlanHref(flags: ExperimentFlags | undefined, pricingUrl: string | undefined): string {
  if (flags?.SELECT_A_PLAN_URL === true) return '/account/signup';
  return pricingUrl ?? '/account/signup';
}
