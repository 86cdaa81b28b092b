import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { ensureDemoDatabases } from '../../demo/demo-databases';

let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let coreBaseId: string;
let leftBaseId: string;
let rightBaseId: string;
let targetUrl: string;
type Column = { id: string; name: string; fieldType: string; readOnly: boolean };
type Table = { id: string; name: string; externalColumns: Column[] };
let crm: Table[];
const json = { 'content-type': 'application/json' };

const post = (url: string, payload: unknown, auth = user.auth) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload: payload as object });

async function schemaOf(side: 'leftExternalBase' | 'rightExternalBase'): Promise<Table[]> {
  const res = await t.app.inject({
    url: `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`,
    headers: user.auth,
  });
  return res.json()[side].externalTables;
}

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  await ensureDemoDatabases((db = 'postgres') => t.ctx.embeddedDatabaseUrl?.(db) as string);
  // An empty database of the test's own on the right, with one table already there.
  const name = `gs_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  targetUrl = t.ctx.embeddedDatabaseUrl?.(name) as string;
  const c = new pg.Client({ connectionString: targetUrl });
  await c.connect();
  await c.query('create table orgs (id serial primary key, title text)');
  await c.end();

  user = await signUp(t.app, 'schema@test.test');
  other = await signUp(t.app, 'schema-other@test.test');
  await post('/rest/users/current/choose-plan', { productType: 'pro' });
  coreBaseId = (await post('/rest/core-bases', { name: 'Copy the CRM' })).json().id;
  const demo = (
    await t.app.inject({ method: 'POST', url: '/rest/demo-databases/demo_crm/connect', headers: user.auth })
  ).json();
  const target = (
    await post('/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: targetUrl },
    })
  ).json();
  const left = await post('/rest/external-bases', {
    type: 'postgresql',
    name: 'CRM',
    remoteId: 'public',
    coreBaseId,
    externalConnectionId: demo.id,
    side: 'left',
  });
  leftBaseId = left.json().leftExternalBase.id;
  crm = left.json().leftExternalBase.externalTables;
  const right = await post('/rest/external-bases', {
    type: 'postgresql',
    name: 'Target',
    remoteId: 'public',
    coreBaseId,
    externalConnectionId: target.id,
    side: 'right',
  });
  expect(right.statusCode).toBe(201);
  rightBaseId = right.json().rightExternalBase.id;
});
afterAll(async () => t?.close());

describe('schema generation', () => {
  it("creates the other app's table with its fields, leaving out record ids, and stores the new schema", async () => {
    const contacts = crm.find((x) => x.name === 'contacts') as Table;
    const res = await post(`/rest/generate-schema/${rightBaseId}/create-tables`, {
      sourceTableIds: [contacts.id],
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json().tables[0];
    expect(created).toMatchObject({
      sourceTableId: contacts.id,
      name: 'contacts',
      remoteId: 'public.contacts',
    });
    const names = created.columns.map((c: { name: string }) => c.name);
    expect(names).toContain('email');
    expect(names).toContain('stage');
    expect(names).not.toContain('company_id');
    expect(created.columns.every((c: { externalColumnId: string }) => c.externalColumnId)).toBe(true);

    const right = await schemaOf('rightExternalBase');
    const table = right.find((x) => x.name === 'contacts') as Table;
    expect(table.id).toBe(created.externalTableId);
    const col = (n: string) => table.externalColumns.find((c) => c.name === n);
    expect(col('id')).toMatchObject({ fieldType: 'number', readOnly: true });
    expect(col('email')?.fieldType).toBe('text');
    expect(col('do_not_contact')?.fieldType).toBe('boolean');
    expect(col('last_contacted')?.fieldType).toBe('date');
    expect(col('created_at')?.fieldType).toBe('datetime');

    // The field mapper pairs the copy field for field, by name.
    const fields = (
      await post(`/rest/ai-field-mapper/${coreBaseId}/automap`, {
        leftTableId: contacts.id,
        rightTableId: table.id,
      })
    ).json();
    const mapped = fields.proposals.map((p: { leftColumnName: string }) => p.leftColumnName);
    expect(mapped).toEqual(expect.arrayContaining(['email', 'full_name', 'phone', 'notes', 'stage']));
    expect(fields.matchField.leftColumnId).toBe(contacts.externalColumns.find((c) => c.name === 'email')?.id);

    // The same name again is refused before the database is touched.
    const again = await post(`/rest/generate-schema/${rightBaseId}/create-tables`, {
      sourceTableIds: [contacts.id],
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().response.userFacingMessage).toMatch(/already has a table named "contacts"/);
  });

  it('adds fields to an existing table, with a suffix for a name it already has', async () => {
    const companies = crm.find((x) => x.name === 'companies') as Table;
    const pick = (n: string) => companies.externalColumns.find((c) => c.name === n)?.id as string;
    const orgs = (await schemaOf('rightExternalBase')).find((x) => x.name === 'orgs') as Table;
    const res = await post(`/rest/generate-schema/${rightBaseId}/create-fields`, {
      destTableId: orgs.id,
      sourceColumnIds: [pick('domain'), pick('annual_revenue'), pick('employees')],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(
      res.json().columns.map((c: { name: string; fieldType: string }) => `${c.name}:${c.fieldType}`),
    ).toEqual(['domain:text', 'annual_revenue:number', 'employees:number']);
    const clash = await post(`/rest/generate-schema/${rightBaseId}/create-fields`, {
      destTableId: orgs.id,
      sourceColumnIds: [pick('domain')],
    });
    expect(clash.json().columns[0].name).toBe('domain_2');
    const after = (await schemaOf('rightExternalBase')).find((x) => x.name === 'orgs') as Table;
    expect(after.externalColumns.map((c) => c.name).sort()).toEqual([
      'annual_revenue',
      'domain',
      'domain_2',
      'employees',
      'id',
      'title',
    ]);
    // A record id of the other app cannot be copied.
    const id = await post(`/rest/generate-schema/${rightBaseId}/create-fields`, {
      destTableId: orgs.id,
      sourceColumnIds: [pick('id')],
    });
    expect(id.statusCode).toBe(400);
  });

  it('refuses sources from the same side, and other users (404)', async () => {
    const orgs = (await schemaOf('rightExternalBase')).find((x) => x.name === 'orgs') as Table;
    const sameSide = await post(`/rest/generate-schema/${leftBaseId}/create-tables`, {
      sourceTableIds: [crm[0]?.id],
    });
    expect(sameSide.statusCode).toBe(400);
    const theirs = await post(
      `/rest/generate-schema/${rightBaseId}/create-tables`,
      { sourceTableIds: [crm[0]?.id] },
      other.auth,
    );
    expect(theirs.statusCode).toBe(404);
    const theirFields = await post(
      `/rest/generate-schema/${rightBaseId}/create-fields`,
      { destTableId: orgs.id, sourceColumnIds: [crm[0]?.externalColumns[0]?.id] },
      other.auth,
    );
    expect(theirFields.statusCode).toBe(404);
  });
});
