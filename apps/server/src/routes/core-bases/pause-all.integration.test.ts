import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

// "Pause all" and "Resume all": every sync of the user that was on goes off, and back on; a sync
// the user had off stays off, and another user's syncs are not touched.
let t: TestApp;
let api: Api;
let other: Api;

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  api = apiAs(t.app, (await signUp(t.app, 'pauser@test.test')).auth);
  other = apiAs(t.app, (await signUp(t.app, 'bystander@test.test')).auth);
  for (const a of [api, other]) await a('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => t?.close());

const stateOf = async (id: string) =>
  (await t.ctx.db.selectFrom('core_base').select('sync_state').where('id', '=', id).executeTakeFirstOrThrow())
    .sync_state;

async function syncWithState(a: Api, name: string, state: 'on' | 'off') {
  const s = await a('POST', '/rest/core-bases', { name });
  await t.ctx.db.updateTable('core_base').set({ sync_state: state }).where('id', '=', s.id).execute();
  return s.id as string;
}

describe('pause all and resume all', () => {
  it('pauses the syncs that are on and resumes exactly those, for this user only', async () => {
    const on1 = await syncWithState(api, 'On one', 'on');
    const on2 = await syncWithState(api, 'On two', 'on');
    const off = await syncWithState(api, 'Off already', 'off');
    const theirs = await syncWithState(other, 'Not mine', 'on');

    expect(await api('POST', '/rest/core-bases/pause-all', {})).toEqual({ paused: 2 });
    expect([await stateOf(on1), await stateOf(on2), await stateOf(off), await stateOf(theirs)]).toEqual([
      'off',
      'off',
      'off',
      'on',
    ]);
    // Switched on by hand meanwhile: resume all no longer owns it (and does not count it).
    await api('PATCH', `/rest/core-bases/${on2}`, { syncState: 'on' });
    await api('PATCH', `/rest/core-bases/${on2}`, { syncState: 'off' });

    expect(await api('POST', '/rest/core-bases/resume-all', {})).toEqual({ resumed: 1 });
    expect([await stateOf(on1), await stateOf(on2), await stateOf(off), await stateOf(theirs)]).toEqual([
      'on',
      'off',
      'off',
      'on',
    ]);
    // Each resumed sync runs at once.
    const queued = await t.ctx.db
      .selectFrom('pgboss.job' as never)
      .select(['singleton_key' as never])
      .where('name' as never, '=', 'sync-run' as never)
      .execute();
    expect(queued.map((j) => (j as { singleton_key: string }).singleton_key)).toContain(on1);
    expect(await api('POST', '/rest/core-bases/resume-all', {})).toEqual({ resumed: 0 });
  });
});
