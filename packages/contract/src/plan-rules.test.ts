import { describe, expect, it } from 'vitest';
import { isBaseLimitReached, isRecordLimitReached, syncPermission } from './plan-rules';
import { tierOfProductType } from './plans';
import type { LimitData, Subscription } from './users';

const active: Subscription = {
  status: 'active',
  daysRemaining: 20,
  planDisplayName: 'Pro',
  productType: 'pro',
};
const limits = (over: Partial<LimitData> = {}): LimitData => ({
  baseCount: 0,
  recordCount: 0,
  baseLimit: 2,
  recordLimit: 100,
  ...over,
});

describe('plan rules', () => {
  it('reaches the base limit at or above it, never when unlimited', () => {
    expect(isBaseLimitReached(limits({ baseCount: 1 }))).toBe(false);
    expect(isBaseLimitReached(limits({ baseCount: 2 }))).toBe(true);
    expect(isBaseLimitReached(limits({ baseCount: 3 }))).toBe(true);
    expect(isBaseLimitReached(limits({ baseCount: 1000, baseLimit: null }))).toBe(false);
  });

  it('reaches the record limit at or above it', () => {
    expect(isRecordLimitReached(limits({ recordCount: 99 }))).toBe(false);
    expect(isRecordLimitReached(limits({ recordCount: 100 }))).toBe(true);
  });

  it('disallows everything without a subscription or limit data', () => {
    for (const action of ['create', 'activate', 'retry'] as const) {
      expect(syncPermission(action, null, limits()).allowed).toBe(false);
      expect(syncPermission(action, active, null).allowed).toBe(false);
      expect(syncPermission(action, { ...active, status: 'none' }, limits()).allowed).toBe(false);
    }
  });

  it('disallows creating, activating and retrying on an expired plan', () => {
    const expired: Subscription = { ...active, status: 'expired', daysRemaining: 0 };
    for (const action of ['create', 'activate', 'retry'] as const) {
      const p = syncPermission(action, expired, limits());
      expect(p.allowed).toBe(false);
      if (!p.allowed) expect(p.reason).toContain('expired');
    }
  });

  it('blocks create at the base limit and activate at the record limit', () => {
    expect(syncPermission('create', active, limits({ baseCount: 2 })).allowed).toBe(false);
    expect(syncPermission('activate', active, limits({ baseCount: 2 })).allowed).toBe(true);
    expect(syncPermission('activate', active, limits({ recordCount: 100 })).allowed).toBe(false);
    expect(syncPermission('create', active, limits({ recordCount: 100 })).allowed).toBe(true);
  });

  it('parses product-type codes with versions', () => {
    expect(tierOfProductType('pro')).toBe('pro');
    expect(tierOfProductType('PRO_V3')).toBe('pro');
    expect(tierOfProductType('startup_v12')).toBe('startup');
    expect(tierOfProductType('gold')).toBeNull();
    expect(tierOfProductType('pro-v2')).toBeNull();
  });
});
