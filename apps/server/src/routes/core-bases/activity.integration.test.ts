import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

// The overview's charts: a sync's runs and issues summed per day, every day of the window present.
let t: TestApp;
let api: Api;
let other: Api;
let coreBaseId = '';

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  const user = await signUp(t.app, 'activity@test.test');
  api = apiAs(t.app, user.auth);
  other = apiAs(t.app, (await signUp(t.app, 'activity-other@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  coreBaseId = (await api('POST', '/rest/core-bases', { name: 'Activity' })).id;
  const run = (at: Date, counts: Record<string, number>) => ({
    owner_id: user.userId,
    core_base_id: coreBaseId,
    trigger: 'test',
    status: 'done' as const,
    counts: JSON.stringify(counts),
    started_at: at,
  });
  await t.ctx.db
    .insertInto('sync_log')
    .values([
      run(daysAgo(0), { created_right: 60, failed: 2 }),
      run(daysAgo(0), { updated_left: 3, created_right: 1 }),
      run(daysAgo(2), { deleted_left: 4 }),
      run(daysAgo(20), { created_left: 999 }),
    ])
    .execute();
  const issue = (at: Date, status: 'open' | 'resolved') => ({
    owner_id: user.userId,
    core_base_id: coreBaseId,
    code: 'validation',
    message: 'm',
    user_facing_message: 'm',
    details: '{}',
    status,
    created_at: at,
    updated_at: at,
  });
  await t.ctx.db
    .insertInto('sync_error')
    .values([issue(daysAgo(0), 'open'), issue(daysAgo(0), 'resolved'), issue(daysAgo(2), 'open')])
    .execute();
});
afterAll(async () => t?.close());

describe('a sync activity per day', () => {
  it('sums the runs and issues of each day of the window, quiet days as zeros', async () => {
    const { days, timeZone } = await api('GET', `/rest/core-bases/${coreBaseId}/activity?days=3`);
    expect(timeZone).toBe('UTC');
    expect(days.map((d: { day: string }) => d.day)).toEqual([
      isoDay(daysAgo(2)),
      isoDay(daysAgo(1)),
      isoDay(daysAgo(0)),
    ]);
    expect(days[2]).toMatchObject({
      createdRight: 61,
      updatedLeft: 3,
      failed: 2,
      issuesOpened: 2,
      issuesResolved: 1,
    });
    expect(days[1]).toMatchObject({ createdRight: 0, deletedLeft: 0, issuesOpened: 0 });
    expect(days[0]).toMatchObject({ deletedLeft: 4, issuesOpened: 1 });
    // The run of 20 days ago is outside the window.
    expect(days.some((d: { createdLeft: number }) => d.createdLeft > 0)).toBe(false);
  });

  it('refuses a time zone that does not exist, and shows nobody else a sync', async () => {
    await expect(api('GET', `/rest/core-bases/${coreBaseId}/activity?timeZone=Mars/Olympus`)).rejects.toThrow(
      /400/,
    );
    await expect(other('GET', `/rest/core-bases/${coreBaseId}/activity`)).rejects.toThrow(/404/);
    const paris = await api('GET', `/rest/core-bases/${coreBaseId}/activity?days=1&timeZone=Europe/Paris`);
    expect(paris.days).toHaveLength(1);
  });
});
