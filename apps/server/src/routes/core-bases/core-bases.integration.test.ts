import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

type User = Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, u: User, payload?: object) =>
  t.app.inject({
    method,
    url,
    headers: payload ? { ...u.auth, ...json } : u.auth,
    ...(payload ? { payload } : {}),
  });

async function userWithPlan(email: string, productType = 'solo') {
  const u = await signUp(t.app, email);
  await call('POST', '/rest/users/current/choose-plan', u, { productType });
  return u;
}

/** Two connected apps with one table each (what the connections issue will create through REST). */
async function connectApps(u: User, coreBaseId: string) {
  const db = t.ctx.db;
  const base = async (side: 'left' | 'right') =>
    db
      .insertInto('external_base')
      .values({
        owner_id: u.userId,
        core_base_id: coreBaseId,
        type: 'postgresql',
        name: `${side} db`,
        remote_id: side,
        side,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const table = async (baseId: string, name: string) =>
    db
      .insertInto('external_table')
      .values({
        owner_id: u.userId,
        external_base_id: baseId,
        remote_id: `public.${name}`,
        name,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const column = async (tableId: string, name: string, fieldType: string, readOnly = false) =>
    (
      await db
        .insertInto('external_column')
        .values({
          owner_id: u.userId,
          external_table_id: tableId,
          remote_id: name,
          name,
          field_type: fieldType,
          read_only: readOnly,
          options: '{}',
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const left = await base('left');
  const right = await base('right');
  const lt = await table(left.id, 'contacts');
  const rt = await table(right.id, 'subscribers');
  return {
    leftTableId: lt.id,
    rightTableId: rt.id,
    leftEmail: await column(lt.id, 'email', 'email'),
    rightEmail: await column(rt.id, 'email', 'email'),
    leftName: await column(lt.id, 'full_name', 'text'),
    rightName: await column(rt.id, 'name', 'text'),
    leftScore: await column(lt.id, 'score', 'number', true),
    leftFiles: await column(lt.id, 'files', 'attachments'),
    rightScore: await column(rt.id, 'score', 'number'),
  };
}

describe('core bases (syncs)', () => {
  it('refuses to create a sync without a plan, and at the base limit', async () => {
    const noPlan = await signUp(t.app, 'noplan@cb.test');
    const refused = await call('POST', '/rest/core-bases', noPlan, {});
    expect(refused.statusCode).toBe(402);
    expect(refused.json().response.userFacingMessage).toBe('Choose a plan to get started.');
    expect((await call('GET', '/rest/core-bases', noPlan)).json().total).toBe(0);

    const u = await userWithPlan('limit@cb.test', 'solo'); // solo: 2 syncs
    const first = await call('POST', '/rest/core-bases', u, {});
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      name: 'Untitled Sync',
      setupOrigin: 'base_setup',
      pinned: false,
      syncState: 'off',
      mappings: { tableMappings: [] },
    });
    // Where it was set up from is kept (spec section 5): the app store, here.
    const second = await call('POST', '/rest/core-bases', u, { name: 'Second', setupOrigin: 'app_store' });
    expect(second.statusCode).toBe(201);
    expect((await call('GET', `/rest/core-bases/${second.json().id}`, u)).json().setupOrigin).toBe(
      'app_store',
    );
    expect(
      (await call('POST', '/rest/core-bases', u, { name: 'X', setupOrigin: 'elsewhere' })).statusCode,
    ).toBe(400);
    const third = await call('POST', '/rest/core-bases', u, { name: 'Third' });
    expect(third.statusCode).toBe(402);
    expect(third.json().response.userFacingMessage).toMatch(/allows 2 syncs/);
    expect((await call('GET', '/rest/users/limit-data', u)).json()).toMatchObject({
      baseCount: 2,
      baseLimit: 2,
    });
  });

  it('lists syncs paged, pinned first, with a JSON filter', async () => {
    const u = await userWithPlan('list@cb.test', 'pro');
    const ids: string[] = [];
    for (const name of ['Alpha', 'Beta', 'Gamma'])
      ids.push((await call('POST', '/rest/core-bases', u, { name })).json().id);
    await call('PATCH', `/rest/core-bases/${ids[0]}`, u, { pinned: true });
    const page = (await call('GET', '/rest/core-bases?take=2', u)).json();
    expect(page.total).toBe(3);
    expect(page.items.map((b: { name: string }) => b.name)).toEqual(['Alpha', 'Gamma']);
    const rest = (await call('GET', '/rest/core-bases?take=2&skip=2', u)).json();
    expect(rest.items.map((b: { name: string }) => b.name)).toEqual(['Beta']);
    const filtered = await call('GET', `/rest/core-bases?filter=${encodeURIComponent('{"name":"amm"}')}`, u);
    expect(filtered.json().items.map((b: { name: string }) => b.name)).toEqual(['Gamma']);
    const bad = await call('GET', `/rest/core-bases?filter=${encodeURIComponent('{"colour":"red"}')}`, u);
    expect(bad.statusCode).toBe(400);
    expect((await call('GET', '/rest/core-bases?filter=nope', u)).json().response.userFacingMessage).toMatch(
      /must be JSON/,
    );
  });

  it('filters the list with typed query parameters the same as with the JSON filter', async () => {
    const u = await userWithPlan('typed-filter@cb.test', 'pro');
    const ids: string[] = [];
    for (const name of ['Orders', 'Order lines', 'Contacts'])
      ids.push((await call('POST', '/rest/core-bases', u, { name })).json().id);
    await call('PATCH', `/rest/core-bases/${ids[1]}`, u, { pinned: true });
    const names = async (query: string) => {
      const res = await call('GET', `/rest/core-bases?${query}`, u);
      expect(res.statusCode, query).toBe(200);
      return res.json().items.map((b: { name: string }) => b.name);
    };
    const viaJson = (filter: object) => `filter=${encodeURIComponent(JSON.stringify(filter))}`;
    expect(await names('name=order')).toEqual(['Order lines', 'Orders']);
    expect(await names('name=order')).toEqual(await names(viaJson({ name: 'order' })));
    expect(await names('name=order&pinned=false')).toEqual(['Orders']);
    expect(await names('name=order&pinned=false')).toEqual(
      await names(viaJson({ name: 'order', pinned: false })),
    );
    expect(await names('pinned=true')).toEqual(await names(viaJson({ pinned: true })));
    expect(await names('syncState=off')).toEqual(await names(viaJson({ syncState: 'off' })));
    expect(await names('syncState=on')).toEqual([]);
    // The two forms combine, but one filter may not be given both ways.
    expect(await names(`pinned=true&${viaJson({ name: 'order' })}`)).toEqual(['Order lines']);
    const twice = await call('GET', `/rest/core-bases?name=a&${viaJson({ name: 'b' })}`, u);
    expect(twice.statusCode).toBe(400);
    expect(twice.json().response.userFacingMessage).toMatch(/Give name once/);
    // A bad typed value is a 400 in the envelope, naming the parameter.
    const bad = await call('GET', '/rest/core-bases?syncState=sometimes', u);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().response.userFacingMessage.join(' ')).toMatch(/querystring\.syncState/);
    expect((await call('GET', '/rest/core-bases?pinned=maybe', u)).statusCode).toBe(400);
    // Another user's filter finds none of this user's syncs.
    const other = await userWithPlan('typed-filter-other@cb.test');
    expect((await call('GET', '/rest/core-bases?name=order', other)).json().total).toBe(0);
  });

  it("keeps another user's sync invisible (404) and unchangeable", async () => {
    const owner = await userWithPlan('owner@cb.test');
    const other = await userWithPlan('intruder@cb.test');
    const id = (await call('POST', '/rest/core-bases', owner, { name: 'Mine' })).json().id;
    expect((await call('GET', `/rest/core-bases/${id}`, other)).statusCode).toBe(404);
    expect((await call('PATCH', `/rest/core-bases/${id}`, other, { name: 'Stolen' })).statusCode).toBe(404);
    expect((await call('DELETE', `/rest/core-bases/${id}?cascade=true`, other)).statusCode).toBe(404);
    expect((await call('GET', `/rest/core-bases/${id}/sync-status`, other)).statusCode).toBe(404);
    expect((await call('GET', `/rest/core-bases/sync-status/batch?coreBaseIds=${id}`, other)).json()).toEqual(
      { statuses: [] },
    );
    expect((await call('GET', `/rest/core-bases/${id}`, owner)).json().name).toBe('Mine');
    expect((await call('GET', '/rest/core-bases/not-a-uuid', owner)).statusCode).toBe(400);
  });

  it('derives the labels of spec section 4 from the runs', async () => {
    const u = await userWithPlan('labels@cb.test');
    const id = (await call('POST', '/rest/core-bases', u, {})).json().id;
    const label = async () => (await call('GET', `/rest/core-bases/${id}/sync-status`, u)).json().label;
    expect(await label()).toBe('Disabled');
    // Switched on in the database: through the API a worker would start a run at once, racing the check.
    await t.ctx.db
      .updateTable('core_base')
      .set({ sync_state: 'on', sync_state_changed_at: new Date() })
      .where('id', '=', id)
      .execute();
    expect(await label()).toBe('Starting up');
    const run = await t.ctx.db
      .insertInto('sync_log')
      .values({ owner_id: u.userId, core_base_id: id, trigger: 'test', counts: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await label()).toBe('Initial sync');
    await t.ctx.db
      .updateTable('sync_log')
      .set({ status: 'done', finished_at: new Date() })
      .where('id', '=', run.id)
      .execute();
    expect(await label()).toBe('Active');
    await t.ctx.db
      .insertInto('sync_log')
      .values({ owner_id: u.userId, core_base_id: id, trigger: 'test', counts: '{}' })
      .execute();
    expect(await label()).toBe('Syncing changes');
    const batch = (await call('GET', `/rest/core-bases/sync-status/batch?coreBaseIds=${id},${id}`, u)).json();
    expect(batch.statuses).toHaveLength(1);
    expect(batch.statuses[0]).toMatchObject({
      coreBaseId: id,
      syncState: 'on',
      running: true,
      label: 'Syncing changes',
    });
  });

  it('refuses to switch a sync on when the plan has expired, changing nothing', async () => {
    const u = await userWithPlan('expired@cb.test');
    const id = (await call('POST', '/rest/core-bases', u, {})).json().id;
    await t.ctx.db
      .updateTable('subscription')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', u.userId)
      .execute();
    const res = await call('PATCH', `/rest/core-bases/${id}`, u, { syncState: 'on', name: 'Renamed' });
    expect(res.statusCode).toBe(402);
    expect(res.json().response.userFacingMessage).toMatch(/expired/);
    expect((await call('GET', `/rest/core-bases/${id}`, u)).json()).toMatchObject({
      syncState: 'off',
      name: 'Untitled Sync',
    });
  });

  it('saves table and field mappings, following read-only fields and refusing foreign ids', async () => {
    const u = await userWithPlan('mappings@cb.test');
    const other = await userWithPlan('mappings-other@cb.test');
    const id = (await call('POST', '/rest/core-bases', u, {})).json().id;
    const otherId = (await call('POST', '/rest/core-bases', other, {})).json().id;
    const s = await connectApps(u, id);
    const foreign = await connectApps(other, otherId);
    const mapping = {
      leftTableId: s.leftTableId,
      rightTableId: s.rightTableId,
      matchOnFieldId: s.leftEmail,
      columnMappings: [
        { leftColumnId: s.leftEmail, rightColumnId: s.rightEmail },
        { leftColumnId: s.leftName, rightColumnId: s.rightName, syncDirection: 'right_to_left' },
        { leftColumnId: s.leftScore, rightColumnId: s.rightScore },
      ],
    };
    const saved = await call('PATCH', `/rest/core-bases/${id}?detailLevel=fullBaseSchema`, u, {
      mappings: { tableMappings: [mapping] },
    });
    expect(saved.statusCode).toBe(200);
    const body = saved.json();
    const tm = body.mappings.tableMappings[0];
    expect(tm).toMatchObject({
      leftTableId: s.leftTableId,
      syncDirection: 'both',
      conflictWinnerSide: 'left',
      matchOnFieldId: s.leftEmail,
    });
    const directions = Object.fromEntries(
      tm.columnMappings.map((c: { leftColumnId: string; syncDirection: string }) => [
        c.leftColumnId,
        c.syncDirection,
      ]),
    );
    expect(directions).toEqual({
      [s.leftEmail]: 'both',
      [s.leftName]: 'right_to_left',
      [s.leftScore]: 'left_to_right',
    });
    expect(
      body.leftExternalBase.externalTables[0].externalColumns.map((c: { name: string }) => c.name),
    ).toEqual(['email', 'files', 'full_name', 'score']);

    // Keeping the id keeps the mapping; a foreign table or an unmapped match field is refused.
    const again = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: { tableMappings: [{ ...mapping, id: tm.id, conflictWinnerSide: 'right' }] },
    });
    expect(again.json().mappings.tableMappings[0]).toMatchObject({ id: tm.id, conflictWinnerSide: 'right' });
    const stolen = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: { tableMappings: [{ ...mapping, rightTableId: foreign.rightTableId }] },
    });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().response.userFacingMessage.join(' ')).toMatch(
      /rightTableId: not a table of this sync's right app/,
    );
    const unmatched = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: {
        tableMappings: [
          { ...mapping, matchOnFieldId: s.leftName, columnMappings: mapping.columnMappings.slice(0, 1) },
        ],
      },
    });
    expect(unmatched.statusCode).toBe(400);
    expect((await call('GET', `/rest/core-bases/${id}`, u)).json().mappings.tableMappings[0].id).toBe(tm.id);

    // Incompatible types and filters that do not parse are refused with their reasons.
    const incompatible = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: {
        tableMappings: [
          {
            ...mapping,
            columnMappings: [
              ...mapping.columnMappings,
              { leftColumnId: s.leftFiles, rightColumnId: s.rightName },
            ],
          },
        ],
      },
    });
    expect(incompatible.statusCode).toBe(400);
    expect(incompatible.json().response.userFacingMessage.join(' ')).toMatch(
      /attachments field \("files"\) cannot be mapped to a text field/,
    );
    const badFilter = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: { tableMappings: [{ ...mapping, filter: { side: 'middle', fieldId: 'x', op: 'eq' } }] },
    });
    expect(badFilter.statusCode).toBe(400);
    expect(badFilter.json().response.userFacingMessage.join(' ')).toMatch(
      /filter\.side must be "left" or "right"/,
    );
    const goodFilter = await call('PATCH', `/rest/core-bases/${id}`, u, {
      mappings: {
        tableMappings: [
          { ...mapping, id: tm.id, filter: { side: 'left', fieldId: 'email', op: 'not_empty' } },
        ],
      },
    });
    expect(goodFilter.json().mappings.tableMappings[0].filter).toEqual({
      side: 'left',
      fieldId: 'email',
      op: 'not_empty',
    });
  });

  it('deletes a sync with connected apps only with cascade=true, and everything it owns with it', async () => {
    const u = await userWithPlan('delete@cb.test');
    const id = (await call('POST', '/rest/core-bases', u, {})).json().id;
    await connectApps(u, id);
    const refused = await call('DELETE', `/rest/core-bases/${id}`, u);
    expect(refused.statusCode).toBe(409);
    expect((await call('DELETE', `/rest/core-bases/${id}?cascade=true`, u)).json()).toEqual({
      deleted: true,
    });
    expect((await call('GET', `/rest/core-bases/${id}`, u)).statusCode).toBe(404);
    const left = await t.ctx.db
      .selectFrom('external_base')
      .select('id')
      .where('core_base_id', '=', id)
      .execute();
    expect(left).toEqual([]);
  });
});
