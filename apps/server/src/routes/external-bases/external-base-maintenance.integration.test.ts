import { randomBytes } from 'node:crypto';
import { createPostgresqlConnector } from '@lockstep/connectors/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import type { ConnectorPort, DiscoveredTable } from '../../connectors/connector-port';
import { ensureDatabase } from '../../db/database';
import { grantStaff } from '../../services/users';

// Debug views of real time, one table's schema read again, and removing an app from a sync, on two
// PostgreSQL databases of this test (and an app with stable field ids for renames).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let staff: Awaited<ReturnType<typeof signUp>>;
const urls = { left: '', right: '' };
const json = { 'content-type': 'application/json' };
type Base = {
  id: string;
  externalTables: {
    id: string;
    remoteId: string;
    externalColumns: { id: string; remoteId: string; name: string }[];
  }[];
};

const post = (url: string, payload: unknown, auth = user.auth) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload: payload as object });

async function database(setup: string): Promise<string> {
  const name = `ebm_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  await sql(u.toString(), setup);
  return u.toString();
}

async function sql(url: string, text: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

async function attach(
  coreBaseId: string,
  side: 'left' | 'right',
  type: string,
  connectionItems: Record<string, string>,
  remoteId = 'public',
) {
  const connection = (await post('/rest/external-connections', { type, connectionItems })).json();
  const res = await post('/rest/external-bases', {
    type,
    name: `${side} app`,
    remoteId,
    coreBaseId,
    externalConnectionId: connection.id,
    side,
    extras: {},
  });
  expect(res.statusCode).toBe(201);
  return res.json()[side === 'left' ? 'leftExternalBase' : 'rightExternalBase'] as Base;
}

// An app whose fields have stable ids (as Airtable's fld…): a rename keeps the id.
let fakeSchema: DiscoveredTable[] = [];
const fakePort: ConnectorPort = {
  type: 'airtable',
  check: async () => ({ accountEmail: 'fake@app.test' }),
  listBases: async () => [{ remoteId: 'appFAKE', name: 'Fake base' }],
  discoverSchema: async () => fakeSchema,
};
const field = (remoteId: string, name: string) => ({
  remoteId,
  name,
  fieldType: 'text',
  readOnly: false,
  options: {},
});

beforeAll(async () => {
  urls.left = await database(
    'create table people (id serial primary key, name text, email text); create table pets (id serial primary key, name text)',
  );
  urls.right = await database('create table contacts (id serial primary key, full_name text)');
  t = await createTestApp({}, { runWorkers: false });
  const registry = t.ctx.connectors;
  t.ctx.connectors = { get: (type) => (type === 'airtable' ? fakePort : registry.get(type)) };
  user = await signUp(t.app, 'maintenance@test.test');
  other = await signUp(t.app, 'maintenance-other@test.test');
  staff = await signUp(t.app, 'maintenance-staff@test.test');
  await grantStaff(t.ctx.db, 'maintenance-staff@test.test');
  await post('/rest/users/current/choose-plan', { productType: 'pro' });
});

afterAll(async () => t?.close());

describe('real-time debug views', () => {
  it('shows the trigger mechanism and, once a run has read, the triggers, cursor and waiting changes', async () => {
    const coreBaseId = (await post('/rest/core-bases', { name: 'Debug' })).json().id;
    const left = await attach(coreBaseId, 'left', 'postgresql', { connectionString: urls.left });
    const people = left.externalTables.find(
      (x) => x.remoteId === 'public.people',
    ) as Base['externalTables'][0];

    const before = await t.app.inject({
      url: `/rest/external-bases/${left.id}/webhooks/debug`,
      headers: user.auth,
    });
    expect(before.statusCode).toBe(200);
    expect(before.json()).toMatchObject({
      externalBaseId: left.id,
      type: 'postgresql',
      mechanism: 'postgres_trigger_notify',
      channel: 'lockstep_changes',
      listened: false,
      error: null,
    });
    expect(
      before.json().tables.every((x: { triggerInstalled: boolean }) => x.triggerInstalled === false),
    ).toBe(true);
    expect(before.body).not.toContain('connectionString');

    // A run's first read installs change capture; the sync keeps its cursor; then someone edits.
    const connector = createPostgresqlConnector({ connectionString: urls.left });
    const page = await connector.read('public.people', null, { pageSize: 100 });
    await connector.end();
    await t.ctx.db
      .insertInto('sync_cursor')
      .values({
        external_table_id: people.id,
        owner_id: user.userId,
        cursor: page.nextCursor,
        full_scan_complete: true,
      })
      .execute();
    await sql(urls.left, `insert into people (name) values ('Grace'), ('Linus')`);
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', coreBaseId).execute();

    const hooks = (
      await t.app.inject({ url: `/rest/external-bases/${left.id}/webhooks/debug`, headers: user.auth })
    ).json();
    expect(hooks.listened).toBe(true);
    expect(hooks.tables).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ remoteId: 'public.people', triggerInstalled: true, triggerEnabled: true }),
        expect.objectContaining({ remoteId: 'public.pets', triggerInstalled: false }),
      ]),
    );

    const state = await t.app.inject({
      url: `/rest/external-bases/${left.id}/webhook-state/debug`,
      headers: user.auth,
    });
    expect(state.statusCode).toBe(200);
    expect(state.json()).toMatchObject({
      syncState: 'on',
      listened: true,
      changeCapture: { installed: true, latestChangeId: '2' },
      error: null,
    });
    const row = state.json().tables.find((x: { remoteId: string }) => x.remoteId === 'public.people');
    expect(row).toMatchObject({
      fullScanComplete: true,
      cursorMode: 'changes',
      cursorChangeId: '0',
      latestChangeId: '2',
      pendingChanges: 2,
    });
    expect(row.lastChangeAt).toBeTruthy();

    // Staff may look; another user may not.
    expect(
      (await t.app.inject({ url: `/rest/external-bases/${left.id}/webhooks/debug`, headers: staff.auth }))
        .statusCode,
    ).toBe(200);
    for (const path of ['webhooks/debug', 'webhook-state/debug']) {
      const res = await t.app.inject({ url: `/rest/external-bases/${left.id}/${path}`, headers: other.auth });
      expect(res.statusCode).toBe(404);
    }
  });

  it('reports an unreachable database as an error in the answer', async () => {
    const coreBaseId = (await post('/rest/core-bases', { name: 'Gone' })).json().id;
    const name = `ebm_gone_${randomBytes(4).toString('hex')}`;
    await ensureDatabase(inject('adminDatabaseUrl'), name);
    const u = new URL(inject('adminDatabaseUrl'));
    u.pathname = `/${name}`;
    await sql(u.toString(), 'create table t (id serial primary key)');
    const left = await attach(coreBaseId, 'left', 'postgresql', { connectionString: u.toString() });
    await sql(inject('adminDatabaseUrl'), `drop database ${name} with (force)`);
    const res = await t.app.inject({
      url: `/rest/external-bases/${left.id}/webhook-state/debug`,
      headers: user.auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().error).toMatch(/does not exist/);
    expect(res.json().changeCapture).toBeNull();
  });
});

describe('update-schema of one table', () => {
  it('adds new fields and flags removed ones for that table only (PostgreSQL)', async () => {
    const coreBaseId = (await post('/rest/core-bases', { name: 'Schema' })).json().id;
    const left = await attach(coreBaseId, 'left', 'postgresql', { connectionString: urls.left });
    const people = left.externalTables.find(
      (x) => x.remoteId === 'public.people',
    ) as Base['externalTables'][0];
    await sql(
      urls.left,
      'alter table people add column phone text; alter table people drop column email; drop table pets',
    );
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-tables/${people.id}/update-schema`,
      headers: user.auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      table: { id: people.id, remoteId: 'public.people', removed: false },
      fields: 3,
      added: [{ remoteId: 'phone', name: 'phone' }],
      renamed: [],
      removed: [{ remoteId: 'email' }],
    });
    // The dropped table is not touched by a single table's update.
    const pets = await t.ctx.db
      .selectFrom('external_table')
      .select('extras')
      .where('external_base_id', '=', left.id)
      .where('remote_id', '=', 'public.pets')
      .executeTakeFirstOrThrow();
    expect((pets.extras as { removed?: boolean }).removed).toBe(false);
    const theirs = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-tables/${people.id}/update-schema`,
      headers: other.auth,
    });
    expect(theirs.statusCode).toBe(404);
    await sql(
      urls.left,
      'create table pets (id serial primary key, name text); alter table people add column email text',
    );
  });

  it('keeps the mapping of a renamed field (stable field ids), and flags a table the app no longer has', async () => {
    fakeSchema = [
      {
        remoteId: 'tblA',
        name: 'Contacts',
        extras: {},
        fields: [field('fld1', 'Name'), field('fld2', 'Email')],
      },
    ];
    const coreBaseId = (await post('/rest/core-bases', { name: 'Renames' })).json().id;
    const left = await attach(coreBaseId, 'left', 'airtable', {}, 'appFAKE');
    const right = await attach(coreBaseId, 'right', 'postgresql', { connectionString: urls.right });
    const table = left.externalTables[0] as Base['externalTables'][0];
    const email = table.externalColumns.find((c) => c.remoteId === 'fld2') as { id: string };
    const contacts = right.externalTables[0] as Base['externalTables'][0];
    const mapping = await t.ctx.db
      .insertInto('table_mapping')
      .values({
        owner_id: user.userId,
        core_base_id: coreBaseId,
        left_table_id: table.id,
        right_table_id: contacts.id,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.ctx.db
      .insertInto('column_mapping')
      .values({
        owner_id: user.userId,
        table_mapping_id: mapping.id,
        left_column_id: email.id,
        right_column_id: (contacts.externalColumns.find((c) => c.remoteId === 'full_name') as { id: string })
          .id,
      })
      .execute();

    fakeSchema = [
      {
        remoteId: 'tblA',
        name: 'People',
        extras: {},
        fields: [field('fld1', 'Name'), field('fld2', 'E-mail')],
      },
    ];
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-tables/${table.id}/update-schema`,
      headers: user.auth,
    });
    expect(res.json()).toMatchObject({
      table: { name: 'People', removed: false },
      added: [],
      renamed: [{ id: email.id, remoteId: 'fld2', name: 'E-mail', previousName: 'Email' }],
      removed: [],
    });
    const kept = await t.ctx.db
      .selectFrom('column_mapping')
      .select('left_column_id')
      .where('table_mapping_id', '=', mapping.id)
      .execute();
    expect(kept).toEqual([{ left_column_id: email.id }]);

    fakeSchema = [];
    const gone = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-tables/${table.id}/update-schema`,
      headers: user.auth,
    });
    expect(gone.json()).toMatchObject({ table: { removed: true }, fields: 0 });
  });
});

describe('removing an app from a sync', () => {
  it('refuses while the sync is on; then removes the base with its mappings, and another can be chosen', async () => {
    const coreBaseId = (await post('/rest/core-bases', { name: 'Change app' })).json().id;
    const left = await attach(coreBaseId, 'left', 'postgresql', { connectionString: urls.left });
    const right = await attach(coreBaseId, 'right', 'postgresql', { connectionString: urls.right });
    const mapping = await t.ctx.db
      .insertInto('table_mapping')
      .values({
        owner_id: user.userId,
        core_base_id: coreBaseId,
        left_table_id: (left.externalTables[0] as { id: string }).id,
        right_table_id: (right.externalTables[0] as { id: string }).id,
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    const list = await t.app.inject({
      url: `/rest/external-bases?coreBaseId=${coreBaseId}&includeBundle=true`,
      headers: user.auth,
    });
    expect(list.json().items).toHaveLength(2);
    expect(list.json().items[0].externalTables.length).toBeGreaterThan(0);

    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', coreBaseId).execute();
    const on = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-bases/${right.id}`,
      headers: user.auth,
    });
    expect(on.statusCode).toBe(409);
    expect(on.json().response.userFacingMessage).toBe('Turn the sync off before removing one of its apps.');
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'off' }).where('id', '=', coreBaseId).execute();

    expect(
      (await t.app.inject({ method: 'DELETE', url: `/rest/external-bases/${right.id}`, headers: other.auth }))
        .statusCode,
    ).toBe(404);
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-bases/${right.id}`,
      headers: user.auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      deleted: true,
      removedTableMappings: 1,
      coreBase: { id: coreBaseId, rightExternalBase: null, leftExternalBase: { id: left.id } },
    });
    expect(res.json().coreBase.mappings.tableMappings).toEqual([]);
    expect(
      await t.ctx.db.selectFrom('table_mapping').select('id').where('id', '=', mapping.id).execute(),
    ).toEqual([]);
    expect(
      (await t.app.inject({ url: `/rest/external-bases/${right.id}`, headers: user.auth })).statusCode,
    ).toBe(404);

    // The side is free again.
    const again = await attach(coreBaseId, 'right', 'postgresql', { connectionString: urls.right });
    expect(again.id).not.toBe(right.id);
  });
});
