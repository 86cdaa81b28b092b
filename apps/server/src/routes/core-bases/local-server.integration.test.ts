import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDemoDatabases } from '../../demo/demo-databases';

// A local server (the embedded default): a user without a plan works on the dev plan, as the web
// app's dev mode shows it; the drift report counts what the sync has linked.
let t: TestApp;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_ENV: 'local' });
  await ensureDemoDatabases((db = 'postgres') => t.ctx.embeddedDatabaseUrl?.(db) as string);
});
afterAll(async () => t.close());

describe('a local server', () => {
  it('lets a user without a plan create a sync on the dev plan', async () => {
    const user = await signUp(t.app, 'local-dev@test.test');
    const created = await t.app.inject({
      method: 'POST',
      url: '/rest/core-bases',
      headers: { ...user.auth, ...json },
      payload: { name: 'Tried locally' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().name).toBe('Tried locally');
  });

  it('reports drift per table pair from the links, to the owner only', async () => {
    const user = await signUp(t.app, 'drift@test.test');
    const other = await signUp(t.app, 'drift-other@test.test');
    const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const res = await t.app.inject({
        method,
        url,
        headers: payload ? { ...user.auth, ...json } : user.auth,
        ...(payload ? { payload } : {}),
      });
      if (res.statusCode >= 400) throw new Error(`${url}: ${res.body}`);
      return res.json();
    };
    const crm = await call('POST', '/rest/demo-databases/demo_crm/connect');
    const news = await call('POST', '/rest/demo-databases/demo_newsletter/connect');
    const core = await call('POST', '/rest/core-bases', {});
    for (const [side, conn] of [
      ['left', crm],
      ['right', news],
    ] as const)
      await call('POST', '/rest/external-bases', {
        type: 'postgresql',
        name: conn.name,
        remoteId: 'public',
        coreBaseId: core.id,
        externalConnectionId: conn.id,
        side,
      });
    const full = await call('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
    const table = (ext: { externalTables: { name: string; id: string }[] }, name: string) =>
      ext.externalTables.find((x) => x.name === name)?.id as string;
    const saved = await call('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: table(full.leftExternalBase, 'contacts'),
            rightTableId: table(full.rightExternalBase, 'subscribers'),
          },
        ],
      },
    });
    const tm = saved.mappings.tableMappings[0].id as string;
    // Links as the runtime keeps them: two in step, one on the left only, one on the right only.
    await t.ctx.db
      .insertInto('core_meta_record')
      .values([
        {
          owner_id: user.userId,
          core_base_id: core.id,
          table_mapping_id: tm,
          left_remote_id: '1',
          right_remote_id: 'a',
        },
        {
          owner_id: user.userId,
          core_base_id: core.id,
          table_mapping_id: tm,
          left_remote_id: '2',
          right_remote_id: 'b',
        },
        { owner_id: user.userId, core_base_id: core.id, table_mapping_id: tm, left_remote_id: '3' },
        {
          owner_id: user.userId,
          core_base_id: core.id,
          table_mapping_id: tm,
          right_remote_id: 'c',
          sync_disabled: true,
        },
      ])
      .execute();
    const drift = await call('GET', `/rest/core-bases/${core.id}/drift-report`);
    expect(drift).toEqual({
      tables: [
        {
          tableMappingId: tm,
          linked: 2,
          onlyLeft: 1,
          onlyRight: 1,
          syncDisabled: 1,
          pendingDeletes: 0,
          openIssues: 0,
        },
      ],
      otherIssues: 0,
    });
    const foreign = await t.app.inject({
      url: `/rest/core-bases/${core.id}/drift-report`,
      headers: other.auth,
    });
    expect(foreign.statusCode).toBe(404);
  });
});
