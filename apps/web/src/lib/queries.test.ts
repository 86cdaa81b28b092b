import type { CurrentUser, LimitData } from '@lockstep/contract';
import { describe, expect, it } from 'vitest';
import { effectivePlan } from './queries';

const user = (status: 'active' | 'expired' | 'none'): CurrentUser => ({
  id: 'u1',
  displayName: 'Ada',
  email: 'ada@example.test',
  role: 'user',
  impersonatedBy: null,
  identityUser: { id: 'u1', email: 'ada@example.test', name: 'Ada', emailVerified: false },
  lockstepUser: {
    id: 'u1',
    intercomHash: 'x',
    createdAt: '2026-01-01T00:00:00.000Z',
    mostRecentEmail: 'ada@example.test',
    experimentFlags: {},
    subscription: {
      status,
      daysRemaining: status === 'none' ? null : 5,
      planDisplayName: status === 'none' ? 'No Plan' : 'Pro',
      productType: status === 'none' ? null : 'pro',
    },
  },
});
const limits: LimitData = { baseCount: 1, recordCount: 10, baseLimit: 0, recordLimit: 0 };

describe('effective plan (spec sections 4-6)', () => {
  it('is none without a user or without limit data', () => {
    expect(effectivePlan(undefined, limits, false).subscription).toMatchObject({
      status: 'none',
      planDisplayName: 'No Plan',
    });
    expect(effectivePlan(user('active'), undefined, false).subscription.status).toBe('none');
  });

  it('keeps a real plan as it is, even in dev mode', () => {
    const p = effectivePlan(user('expired'), limits, true);
    expect(p.devPlan).toBe(false);
    expect(p.subscription.status).toBe('expired');
  });

  it('gives the dev plan in dev mode: 30 days, unlimited bases, the server record limit or 1000', () => {
    const p = effectivePlan(user('none'), limits, true);
    expect(p.devPlan).toBe(true);
    expect(p.subscription).toMatchObject({
      status: 'active',
      daysRemaining: 30,
      planDisplayName: 'Dev Plan',
    });
    expect(p.limits).toMatchObject({ baseLimit: null, recordLimit: 1000, baseCount: 1 });
    expect(effectivePlan(user('none'), { ...limits, recordLimit: 5000 }, true).limits?.recordLimit).toBe(
      5000,
    );
  });
});
