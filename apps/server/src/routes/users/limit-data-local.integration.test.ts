import { DEV_PLAN } from '@lockstep/contract';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

// A local server (the embedded default): a user without a plan works on the dev plan, and the
// limits shown are the ones the server enforces (issue 17: they read 0 while syncs could be made).
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_ENV: 'local' });
});
afterAll(async () => t.close());

it('shows the dev plan limits a local server enforces to a user without a plan', async () => {
  const u = await signUp(t.app, 'local-limits@example.test');
  const limits = (await t.app.inject({ url: '/rest/users/limit-data', headers: u.auth })).json();
  expect(limits).toMatchObject({
    baseCount: 0,
    recordCount: 0,
    baseLimit: DEV_PLAN.baseLimit,
    recordLimit: DEV_PLAN.fallbackRecordLimit,
  });
});
