import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';

// create-tables-async through the real job queue, and the setup routes: a table without a partner
// created in the other app and mapped to it in one call, for one table or for a whole app. Two real
// PostgreSQL databases: a shop on the left, an empty one on the right.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let coreBaseId: string;
let leftBaseId: string;
let rightBaseId: string;
let sourceConnectionId: string;
let sourceUrl: string;
let targetUrl: string;
type Column = { id: string; name: string; readOnly: boolean };
type Table = { id: string; name: string; externalColumns: Column[] };
type ColumnMapping = { leftColumnId: string; rightColumnId: string; syncDirection: string };
type Mapping = {
  id: string;
  leftTableId: string;
  rightTableId: string;
  matchOnFieldId: string | null;
  conflictWinnerSide: string;
  columnMappings: ColumnMapping[];
};
type Progress = {
  status: string;
  done: number;
  total: number;
  message: string | null;
  result: { tables: { name: string }[] } | null;
};
let shop: Table[];
const json = { 'content-type': 'application/json' };

const post = (url: string, payload: unknown = {}, auth = user.auth) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload: payload as object });
const tableNamed = (name: string) => shop.find((x) => x.name === name) as Table;

async function query(url: string, text: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}
const targetTables = async () =>
  (
    await query(
      targetUrl,
      `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
    )
  ).map((r) => r.table_name as string);

async function sync() {
  const res = await t.app.inject({
    url: `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`,
    headers: user.auth,
  });
  return res.json() as {
    mappings: { tableMappings: Mapping[] };
    rightExternalBase: { externalTables: Table[] };
  };
}

/** Polls the tracker (GET /rest/progress/{id}) until the job has finished. */
async function finished(trackingId: string): Promise<Progress> {
  for (let i = 0; i < 300; i++) {
    const progress: Progress = (
      await t.app.inject({ url: `/rest/progress/${trackingId}`, headers: user.auth })
    ).json();
    if (progress.status === 'COMPLETED' || progress.status === 'FAILED') return progress;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the job did not finish');
}

async function newDatabase(prefix: string) {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  return t.ctx.embeddedDatabaseUrl?.(name) as string;
}

beforeAll(async () => {
  t = await createTestApp();
  sourceUrl = await newDatabase('gss_shop');
  targetUrl = await newDatabase('gss_target');
  await query(
    sourceUrl,
    `create table customers (
       id bigint generated always as identity primary key,
       contact_email_verified boolean not null default false,
       email text not null unique,
       full_name text,
       full_name_upper text generated always as (upper(full_name)) stored);
     create table orders (id serial primary key, customer_id bigint references customers(id), total numeric(12, 2));
     create table products (id serial primary key, name text, price numeric(12, 2));
     create table invoices (id serial primary key, number text, issued_on date);
     create table suppliers (id serial primary key, name text, supplier_email text);
     create table shipments (id serial primary key, supplier_id int references suppliers(id), sent_at timestamptz);
     create table warehouses (id serial primary key, city text)`,
  );
  user = await signUp(t.app, 'schema-setup@test.test');
  other = await signUp(t.app, 'schema-setup-other@test.test');
  await post('/rest/users/current/choose-plan', { productType: 'pro' });
  coreBaseId = (await post('/rest/core-bases', { name: 'Copy the shop' })).json().id;
  const connect = async (connectionString: string) =>
    (
      await post('/rest/external-connections', { type: 'postgresql', connectionItems: { connectionString } })
    ).json().id as string;
  sourceConnectionId = await connect(sourceUrl);
  const left = await post('/rest/external-bases', {
    type: 'postgresql',
    name: 'Shop',
    remoteId: 'public',
    coreBaseId,
    externalConnectionId: sourceConnectionId,
    side: 'left',
  });
  leftBaseId = left.json().leftExternalBase.id;
  shop = left.json().leftExternalBase.externalTables;
  rightBaseId = (
    await post('/rest/external-bases', {
      type: 'postgresql',
      name: 'Target',
      remoteId: 'public',
      coreBaseId,
      externalConnectionId: await connect(targetUrl),
      side: 'right',
    })
  ).json().rightExternalBase.id;
});
afterAll(async () => t?.close());

describe('create-tables-async', () => {
  it('answers 202 with a tracker that moves table by table and ends with what was made', async () => {
    const res = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('products').id, tableNamed('invoices').id],
    });
    expect(res.statusCode, res.body).toBe(202);
    const progress = await finished(res.json().trackingId);
    expect(progress).toMatchObject({ status: 'COMPLETED', done: 2, total: 2, message: '2 tables created' });
    expect(progress.result?.tables.map((x) => x.name)).toEqual(['products', 'invoices']);
    expect(await targetTables()).toEqual(['invoices', 'products']);
    // The new tables are in the stored schema at once.
    const stored = (await sync()).rightExternalBase.externalTables.map((x) => x.name).sort();
    expect(stored).toEqual(['invoices', 'products']);
  });

  it('ends FAILED with the reason when a table cannot be made, the tables made before it kept', async () => {
    // Made by someone in the database since Lockstep last read it (the job learns of it when the
    // first table's schema is read back).
    await query(targetUrl, 'create table orders (id serial primary key)');
    await query(sourceUrl, 'create table refunds (id serial primary key, amount numeric)');
    const refreshed = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-bases/${leftBaseId}/update-table-previews`,
      headers: user.auth,
    });
    expect(refreshed.statusCode, refreshed.body).toBeLessThan(300);
    shop = (await t.app.inject({ url: `/rest/external-bases/${leftBaseId}`, headers: user.auth })).json()
      .externalTables;
    const res = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('refunds').id, tableNamed('orders').id],
    });
    expect(res.statusCode, res.body).toBe(202);
    const progress = await finished(res.json().trackingId);
    expect(progress).toMatchObject({ status: 'FAILED', done: 1, total: 2 });
    expect(progress.message).toMatch(/Target already has a table named "orders"/);
    expect(progress.result?.tables.map((x) => x.name)).toEqual(['refunds']);
  });

  it('refuses bad input at once, in the envelope, without starting a job', async () => {
    const taken = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('products').id],
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({
      statusCode: 409,
      path: `/rest/generate-schema/${rightBaseId}/create-tables-async`,
      timestamp: expect.any(String),
      response: { userFacingMessage: expect.stringMatching(/already has a table named "products"/) },
    });
    const sameSide = await post(`/rest/generate-schema/${leftBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('products').id],
    });
    expect(sameSide.statusCode).toBe(400);
    expect(sameSide.json().response.userFacingMessage).toMatch(/tables of the sync's other app/);
    const empty = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [],
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({
      statusCode: 400,
      response: { userFacingMessage: expect.anything() },
    });
    const trackers = await t.ctx.db
      .selectFrom('progress_tracker')
      .select('id')
      .where('owner_id', '=', user.userId)
      .execute();
    expect(trackers).toHaveLength(2);
  });
});

describe('setup of a table without a partner', () => {
  it('creates it in the other app and maps it: every field paired as the engine allows, matched on email', async () => {
    const customers = tableNamed('customers');
    const col = (n: string) => customers.externalColumns.find((c) => c.name === n) as Column;
    const res = await post(`/rest/generate-schema/setup/${customers.id}`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().skipped).toEqual([]);
    const [setUp] = res.json().setUp;
    expect(setUp).toMatchObject({ sourceTableId: customers.id, unmappedFields: [] });
    expect(setUp.tableMappingId).toMatch(/^[0-9a-f-]{36}$/);
    // "email", not the boolean that sorts first and has email in its name.
    expect(setUp.matchOnFieldId).toBe(col('email').id);
    expect(await targetTables()).toContain('customers');

    const mapping = (await sync()).mappings.tableMappings.find(
      (m) => m.id === setUp.tableMappingId,
    ) as Mapping;
    expect(mapping).toMatchObject({
      leftTableId: customers.id,
      rightTableId: setUp.created.externalTableId,
      matchOnFieldId: col('email').id,
      conflictWinnerSide: 'left',
    });
    const created = setUp.created.columns as { sourceColumnId: string; externalColumnId: string }[];
    expect(created.map((c) => c.sourceColumnId).sort()).toEqual(
      ['contact_email_verified', 'email', 'full_name', 'full_name_upper'].map((n) => col(n).id).sort(),
    );
    expect(mapping.columnMappings).toHaveLength(created.length);
    const direction = (n: string) =>
      mapping.columnMappings.find((m) => m.leftColumnId === col(n).id)?.syncDirection;
    expect(direction('email')).toBe('both');
    // A generated column can only be read: the engine narrows its pair to one way.
    expect(direction('full_name_upper')).toBe('left_to_right');
  });

  it('refuses a table that is mapped already, and one whose name the other app has, with why', async () => {
    const again = await post(`/rest/generate-schema/setup/${tableNamed('customers').id}`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({
      statusCode: 409,
      path: `/rest/generate-schema/setup/${tableNamed('customers').id}`,
      response: { userFacingMessage: expect.stringMatching(/customers: It is mapped already/) },
    });
    // products, made on the right by the job above and never mapped: the left app has that name.
    const products = (await sync()).rightExternalBase.externalTables.find(
      (x) => x.name === 'products',
    ) as Table;
    const taken = await post(`/rest/generate-schema/setup/${products.id}`);
    expect(taken.statusCode).toBe(409);
    expect(taken.json().response.userFacingMessage).toMatch(/Shop already has a table named "products"/);
    const notAnId = await post('/rest/generate-schema/setup/not-a-table');
    expect(notAnId.statusCode).toBe(400);
    expect(notAnId.json()).toMatchObject({
      statusCode: 400,
      response: { userFacingMessage: expect.anything() },
    });
  });
});

describe('setup of every table without a partner', () => {
  it('sets up the rest of the app in one call and says why it skipped the others', async () => {
    const before = (await sync()).mappings.tableMappings.length;
    // Made in the database since Lockstep last read it: the database itself refuses this one.
    await query(targetUrl, 'create table shipments (id int)');
    const res = await post(`/rest/generate-schema/setup/tables/${leftBaseId}`);
    expect(res.statusCode, res.body).toBe(201);
    const { setUp, skipped } = res.json() as {
      setUp: { created: { name: string }; tableMappingId: string; matchOnFieldId: string | null }[];
      skipped: { name: string; reason: string }[];
    };
    const why = Object.fromEntries(skipped.map((s) => [s.name, s.reason]));
    expect(Object.keys(why).sort()).toEqual([
      'customers',
      'invoices',
      'orders',
      'products',
      'refunds',
      'shipments',
    ]);
    expect(why.customers).toMatch(/mapped already/);
    expect(why.products).toMatch(/already has a table named "products"/);
    expect(why.refunds).toMatch(/already has a table named "refunds"/);
    expect(why.orders).toMatch(/already has a table named "orders"/);
    expect(why.shipments).toMatch(/The database refused the change: relation "shipments" already exists/);
    expect(setUp.map((s) => s.created.name).sort()).toEqual(['suppliers', 'warehouses']);
    const suppliers = tableNamed('suppliers');
    expect(setUp.find((s) => s.created.name === 'suppliers')?.matchOnFieldId).toBe(
      suppliers.externalColumns.find((c) => c.name === 'supplier_email')?.id,
    );
    const mappings = (await sync()).mappings.tableMappings;
    expect(mappings).toHaveLength(before + 2);
    for (const s of setUp) expect(mappings.some((m) => m.id === s.tableMappingId)).toBe(true);
    expect(await targetTables()).toEqual(expect.arrayContaining(['suppliers', 'warehouses']));
    // Nothing left to set up: everything is skipped, nothing changes.
    const again = await post(`/rest/generate-schema/setup/tables/${leftBaseId}`);
    expect(again.statusCode).toBe(201);
    expect(again.json().setUp).toEqual([]);
  });

  it('refuses when the other app cannot make tables, or is not connected', async () => {
    const halfId = (await post('/rest/core-bases', { name: 'Half' })).json().id;
    const half = await post('/rest/external-bases', {
      type: 'postgresql',
      name: 'Shop',
      remoteId: 'public',
      coreBaseId: halfId,
      externalConnectionId: sourceConnectionId,
      side: 'left',
    });
    const halfLeft = half.json().leftExternalBase as { id: string; externalTables: Table[] };
    const lonely = await post(`/rest/generate-schema/setup/tables/${halfLeft.id}`);
    expect(lonely.statusCode).toBe(409);
    expect(lonely.json().response.userFacingMessage).toMatch(/Connect an app on the other side/);
    // An app Lockstep cannot make tables in (HubSpot: its objects are fixed) on the other side.
    await t.ctx.db
      .insertInto('external_base')
      .values({
        owner_id: user.userId,
        core_base_id: halfId,
        external_connection_id: null,
        type: 'hubspot',
        name: 'CRM',
        remote_id: 'portal',
        side: 'right',
        extras: JSON.stringify({}),
        created_at: new Date(),
        updated_at: new Date(),
      })
      .execute();
    const hubspot = await post(`/rest/generate-schema/setup/tables/${halfLeft.id}`);
    expect(hubspot.statusCode).toBe(400);
    expect(hubspot.json().response.userFacingMessage).toMatch(
      /Creating tables and fields in HubSpot is not supported/,
    );
    const one = await post(`/rest/generate-schema/setup/${halfLeft.externalTables[0]?.id}`);
    expect(one.statusCode).toBe(400);
    expect(
      await t.ctx.db.selectFrom('table_mapping').select('id').where('core_base_id', '=', halfId).execute(),
    ).toEqual([]);
  });
});

describe('ownership', () => {
  it("refuses another user's tables and apps (404)", async () => {
    const theirs = [
      post(`/rest/generate-schema/setup/${tableNamed('shipments').id}`, {}, other.auth),
      post(`/rest/generate-schema/setup/tables/${leftBaseId}`, {}, other.auth),
      post(
        `/rest/generate-schema/${rightBaseId}/create-tables-async`,
        { sourceTableIds: [tableNamed('shipments').id] },
        other.auth,
      ),
    ];
    for (const res of await Promise.all(theirs)) {
      expect(res.statusCode).toBe(404);
      expect(res.json().response.userFacingMessage).toMatch(/was not found/);
    }
  });
});
