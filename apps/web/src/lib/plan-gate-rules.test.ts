import { describe, expect, it } from 'vitest';
import { choosePlanHref, isPlanGatedPath, planGateView } from './plan-gate-rules';

describe('plan gate rules (spec sections 2 and 4)', () => {
  it('gates exactly the plan routes', () => {
    for (const path of ['/syncs', '/syncs/new', '/issues', '/operations', '/get-started', '/syncs/']) {
      expect(isPlanGatedPath(path)).toBe(true);
    }
    for (const path of ['/settings', '/settings/profile', '/subscription/manage', '/account/signup', '/']) {
      expect(isPlanGatedPath(path)).toBe(false);
    }
  });

  it('shows the gate for status none, a notice for expired, nothing for active or trialing', () => {
    expect(planGateView('/syncs', 'none')).toBe('gate');
    expect(planGateView('/syncs', 'expired')).toBe('expired-notice');
    expect(planGateView('/syncs', 'active')).toBeNull();
    expect(planGateView('/issues', 'trialing')).toBeNull();
    expect(planGateView('/settings', 'none')).toBeNull();
  });

  it('sends Choose Plan in-app only when SELECT_A_PLAN_URL is true', () => {
    const pricing = 'https://lockstep.dev/pricing';
    expect(choosePlanHref({ SELECT_A_PLAN_URL: true }, pricing)).toBe('/account/signup');
    expect(choosePlanHref({ SELECT_A_PLAN_URL: false }, pricing)).toBe(pricing);
    expect(choosePlanHref({ SELECT_A_PLAN_URL: ['x'] }, pricing)).toBe(pricing);
    expect(choosePlanHref({}, pricing)).toBe(pricing);
  });
});
