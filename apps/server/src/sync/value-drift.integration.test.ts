import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { handleSyncRun } from '../jobs/sync-run';
import { createSyncRunner } from './run-sync-chunk';
import { checkValueDrift } from './value-drift';

// Two PostgreSQL `people` tables in step; then an edit the change capture never sees (made with
// session_replication_role = replica, which skips triggers, as a restore or a replication tool
// would) and an ordinary edit. Only the first is drift: the check finds it, opens an issue, and
// the issue's Retry syncs it over. The ordinary edit is carried by the run the check lets go first.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
let syncId = '';

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'drift@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `drift_${side}_${suffix}`);
    urls[side] = databaseUrl(`drift_${side}_${suffix}`);
    await query(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  await query(
    urls.left,
    `insert into people (email, name) select 'p' || g || '@test.test', 'Person ' || g from generate_series(1, 40) g`,
  );
  syncId = (await setUpPeopleSync(api, urls, { name: 'Drift' })).id;
  await api('PATCH', `/rest/core-bases/${syncId}`, { syncState: 'on' });
  await until(
    async () => Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n) === 40,
    'the first sync copies every person',
  );
  await settleSync(t.ctx.db, syncId, () => true, 30_000);
});
afterAll(async () => t?.close());

type CheckProgress = {
  status: string;
  result: { checked: number; drifted: number; tables: unknown[] } | null;
};

async function runCheck(body: object = { full: true }): Promise<CheckProgress> {
  const { trackingId } = await api('POST', `/rest/core-bases/${syncId}/drift-checks`, body);
  const end = Date.now() + 90_000;
  for (;;) {
    const progress: CheckProgress = await api('GET', `/rest/progress/${trackingId}`);
    if (progress.status === 'COMPLETED' || progress.status === 'FAILED') return progress;
    if (Date.now() > end) throw new Error(`the drift check did not end: ${JSON.stringify(progress)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const driftIssues = async () =>
  (
    await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: syncId }))}`,
    )
  ).items.filter((i: { code: string; status: string }) => i.code === 'drift' && i.status !== 'resolved');

describe('value-level drift', () => {
  it('finds an edit no change signal carried, says so as an issue, and Retry syncs it', async () => {
    expect((await runCheck()).result).toMatchObject({ checked: 40, drifted: 0 });

    // Unseen by the triggers: the right side now holds another name than Lockstep last synced.
    await query(
      urls.right,
      `set session_replication_role = replica; update people set name = 'Edited quietly' where email = 'p7@test.test'`,
    );
    // Seen: an ordinary edit, which the run the check waits for carries (late, not drift).
    await query(urls.left, `update people set name = 'Edited openly' where email = 'p9@test.test'`);

    const check = await runCheck();
    expect(check.status).toBe('COMPLETED');
    expect(check.result).toMatchObject({ checked: 40, drifted: 1 });
    expect((await query(urls.right, `select name from people where email = 'p9@test.test'`))[0]?.name).toBe(
      'Edited openly',
    );
    const issues = await driftIssues();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ side: 'right', status: 'open' });
    expect(issues[0].userFacingMessage).toMatch(/name .*no change was ever signalled/);
    // The left side still has the old name: drift stays apart until someone acts.
    expect((await query(urls.left, `select name from people where email = 'p7@test.test'`))[0]?.name).toBe(
      'Person 7',
    );

    await api('POST', `/rest/sync-errors/clear-and-retry/${issues[0].id}`, {});
    await until(
      async () =>
        (await query(urls.left, `select name from people where email = 'p7@test.test'`))[0]?.name ===
        'Edited quietly',
      'the retry syncs the edited side over',
    );
    await until(async () => (await driftIssues()).length === 0, 'the drift issue resolves');
    expect((await runCheck()).result).toMatchObject({ drifted: 0 });
  });

  it('refuses to check a sync that is off, and samples when asked to', async () => {
    const sampled = await runCheck({ sample: 5 });
    expect(sampled.result).toMatchObject({ checked: 5, drifted: 0 });
    await api('PATCH', `/rest/core-bases/${syncId}`, { syncState: 'off' });
    const res = await t.app.inject({
      method: 'POST',
      url: `/rest/core-bases/${syncId}/drift-checks`,
      headers: { ...(await signUp(t.app, 'drift-other@test.test')).auth, 'content-type': 'application/json' },
      payload: {},
    });
    expect(res.statusCode).toBe(404); // another user's sync
    await expect(api('POST', `/rest/core-bases/${syncId}/drift-checks`, {})).rejects.toThrow(/409/);
  });

  it('counts a change that was signalled but not carried yet as late, not drift: it lets a run carry it first', async () => {
    // Off: the edits below wait (their change is captured, no run carries it).
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'off' }).where('id', '=', syncId).execute();
    await query(
      urls.left,
      `update people set name = 'Waiting in the change log' where email = 'p11@test.test'`,
    );
    await query(
      urls.right,
      `set session_replication_role = replica; update people set name = 'Quiet again' where email = 'p12@test.test'`,
    );
    const deps = { db: t.ctx.db, secretBox: t.ctx.secretBox, connectors: t.ctx.runtimeConnectors };
    let settled = false;
    const tables = await checkValueDrift(deps, syncId, {
      full: true,
      sample: 0,
      // The run the check lets go: here driven in process, so nothing else carries the edit first.
      settle: async () => {
        settled = true;
        await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', syncId).execute();
        const runner = createSyncRunner(deps);
        for (let i = 0; i < 10; i++) {
          const r = await handleSyncRun(
            t.ctx.db,
            t.ctx.boss,
            runner,
            { coreBaseId: syncId, trigger: 'test' },
            {
              chain: false,
            },
          );
          if (r === 'done') break;
        }
      },
    });
    expect(settled).toBe(true);
    expect(tables).toEqual([expect.objectContaining({ checked: 40, drifted: 1, skipped: null })]);
    expect((await query(urls.right, `select name from people where email = 'p11@test.test'`))[0]?.name).toBe(
      'Waiting in the change log',
    );
    const issues = await driftIssues();
    expect(issues).toHaveLength(1);
    expect(issues[0].userFacingMessage).toMatch(/^name in people/);
  });
});
