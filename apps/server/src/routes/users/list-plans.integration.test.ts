import { PLAN_TIER_NAMES, PLAN_TIERS } from '@lockstep/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { HISTORY_RETENTION_DAYS } from '../../services/subscriptions';

// GET /rest/plans: the plan page lists every plan with the limits the server enforces.
let t: TestApp;
let withRetention: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  withRetention = await createTestApp({ LOCKSTEP_HISTORY_RETENTION_DAYS: '3' }, { runWorkers: false });
});
afterAll(async () => {
  await t?.close();
  await withRetention?.close();
});

describe('GET /rest/plans', () => {
  it('lists every plan, in order, with the limits of the plan table and the history it keeps', async () => {
    const u = await signUp(t.app, 'plans@example.test');
    const res = await t.app.inject({ url: '/rest/plans', headers: u.auth });
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items.map((p: { tier: string }) => p.tier)).toEqual(PLAN_TIER_NAMES);
    for (const tier of PLAN_TIER_NAMES) {
      expect(items.find((p: { tier: string }) => p.tier === tier)).toEqual({
        tier,
        displayName: PLAN_TIERS[tier].displayName,
        baseLimit: PLAN_TIERS[tier].baseLimit,
        recordLimit: PLAN_TIERS[tier].recordLimit,
        pollIntervalSeconds: PLAN_TIERS[tier].pollIntervalSeconds,
        historyRetentionDays: HISTORY_RETENTION_DAYS[tier],
      });
    }
    // The figures the limit checks use: a Pro user's limit data carries the same ones.
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...u.auth, 'content-type': 'application/json' },
      payload: { productType: 'pro' },
    });
    const limits = (await t.app.inject({ url: '/rest/users/limit-data', headers: u.auth })).json();
    const pro = items.find((p: { tier: string }) => p.tier === 'pro');
    expect(limits).toMatchObject({ baseLimit: pro.baseLimit, recordLimit: pro.recordLimit });
  });

  it('shows one retention for every plan when LOCKSTEP_HISTORY_RETENTION_DAYS sets it', async () => {
    const u = await signUp(withRetention.app, 'plans-retention@example.test');
    const { items } = (await withRetention.app.inject({ url: '/rest/plans', headers: u.auth })).json();
    expect(new Set(items.map((p: { historyRetentionDays: number }) => p.historyRetentionDays))).toEqual(
      new Set([3]),
    );
    // The figure the pruning job is given (jobs/index.ts passes config.historyRetentionDays).
    expect(withRetention.ctx.config.historyRetentionDays).toBe(3);
  });

  it('needs a signed-in user and is documented in the OpenAPI description', async () => {
    expect((await t.app.inject({ url: '/rest/plans' })).statusCode).toBe(401);
    const doc = (await t.app.inject({ url: '/api/docs/json' })).json();
    expect(doc.paths['/rest/plans']?.get?.summary).toBe('Every plan and its limits');
  });
});
