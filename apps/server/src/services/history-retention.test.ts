import type { Subscription } from '@lockstep/contract';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { historyRetentionDaysOf } from './subscriptions';

const sub = (status: Subscription['status'], productType: string | null): Subscription => ({
  status,
  productType,
  daysRemaining: null,
  planDisplayName: 'x',
});

describe('history retention by plan', () => {
  it('keeps 7 days without a plan, 30 on the dev plan and small plans, 90 on pro and up', () => {
    expect(historyRetentionDaysOf(sub('none', null))).toBe(7);
    expect(historyRetentionDaysOf(sub('none', null), true)).toBe(30);
    expect(historyRetentionDaysOf(sub('expired', 'pro'), true)).toBe(7);
    expect(historyRetentionDaysOf(sub('active', 'personal'))).toBe(30);
    expect(historyRetentionDaysOf(sub('trialing', 'startup_v2'))).toBe(30);
    expect(historyRetentionDaysOf(sub('active', 'PRO_V3'))).toBe(90);
    expect(historyRetentionDaysOf(sub('active', 'enterprise'))).toBe(90);
  });

  it('reads LOCKSTEP_HISTORY_RETENTION_DAYS: unset or empty is per plan, else a whole number of days', () => {
    const argv = ['node', 'main'];
    expect(loadConfig({}, argv).historyRetentionDays).toBeUndefined();
    expect(loadConfig({ LOCKSTEP_HISTORY_RETENTION_DAYS: '' }, argv).historyRetentionDays).toBeUndefined();
    expect(loadConfig({ LOCKSTEP_HISTORY_RETENTION_DAYS: '14' }, argv).historyRetentionDays).toBe(14);
    expect(() => loadConfig({ LOCKSTEP_HISTORY_RETENTION_DAYS: '0' }, argv)).toThrow(/HISTORY_RETENTION/);
    expect(() => loadConfig({ LOCKSTEP_HISTORY_RETENTION_DAYS: 'week' }, argv)).toThrow(/HISTORY_RETENTION/);
  });
});
