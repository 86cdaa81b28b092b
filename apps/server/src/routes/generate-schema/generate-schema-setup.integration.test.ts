import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { ensureDemoDatabases } from '../../demo/demo-databases';

// create-tables-async through the real job queue, and the setup routes: a table without a partner
// created in the other app and mapped to it in one call, for one table or for a whole app.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let coreBaseId: string;
let leftBaseId: string;
let rightBaseId: string;
let targetUrl: string;
type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
let crm: Table[];
const json = { 'content-type': 'application/json' };
const post = (url: string, payload: unknown = {}, auth = user.auth) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload: payload as object });
const tableNamed = (name: string) => crm.find((x) => x.name === name) as Table;

async function targetTables() {
  const c = new pg.Client({ connectionString: targetUrl });
  await c.connect();
  try {
    return (
      await c.query(
        `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
      )
    ).rows.map((r) => r.table_name as string);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  t = await createTestApp();
  await ensureDemoDatabases((db = 'postgres') => t.ctx.embeddedDatabaseUrl?.(db) as string);
  const name = `gss_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  targetUrl = t.ctx.embeddedDatabaseUrl?.(name) as string;
  user = await signUp(t.app, 'schema-setup@test.test');
  other = await signUp(t.app, 'schema-setup-other@test.test');
  await post('/rest/users/current/choose-plan', { productType: 'pro' });
  coreBaseId = (await post('/rest/core-bases', { name: 'Set up the CRM' })).json().id;
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
  rightBaseId = (
    await post('/rest/external-bases', {
      type: 'postgresql',
      name: 'Target',
      remoteId: 'public',
      coreBaseId,
      externalConnectionId: target.id,
      side: 'right',
    })
  ).json().rightExternalBase.id;
});
afterAll(async () => t?.close());

describe('schema generation in the background, and set-up in one call', () => {
  it('creates tables as a job: 202 with a tracker that ends with what was made', async () => {
    const res = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('companies').id],
    });
    expect(res.statusCode, res.body).toBe(202);
    const { trackingId } = res.json();
    let progress: { status: string; done: number; total: number; result: { tables: { name: string }[] } } =
      res.json();
    for (let i = 0; i < 300; i++) {
      progress = (await t.app.inject({ url: `/rest/progress/${trackingId}`, headers: user.auth })).json();
      if (progress.status === 'COMPLETED' || progress.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(progress).toMatchObject({ status: 'COMPLETED', done: 1, total: 1 });
    expect(progress.result.tables.map((x) => x.name)).toEqual(['companies']);
    expect(await targetTables()).toContain('companies');

    // A name taken: the job fails with the reason, and the tracker says so.
    const again = await post(`/rest/generate-schema/${rightBaseId}/create-tables-async`, {
      sourceTableIds: [tableNamed('companies').id],
    });
    const againId = again.json().trackingId;
    for (let i = 0; i < 300; i++) {
      progress = (await t.app.inject({ url: `/rest/progress/${againId}`, headers: user.auth })).json();
      if (progress.status === 'COMPLETED' || progress.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(progress).toMatchObject({
      status: 'FAILED',
      message: expect.stringMatching(/already has a table named "companies"/),
    });
  });

  it('sets one table up: created in the other app, mapped, every field paired, matched on email', async () => {
    const contacts = tableNamed('contacts');
    const res = await post(`/rest/generate-schema/setup/${contacts.id}`);
    expect(res.statusCode, res.body).toBe(201);
    const [setUp] = res.json().setUp;
    expect(setUp.tableMappingId).toMatch(/^[0-9a-f-]{36}$/);
    expect(setUp.matchOnFieldId).toBe(contacts.externalColumns.find((c) => c.name === 'email')?.id);
    const base = (
      await t.app.inject({
        url: `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`,
        headers: user.auth,
      })
    ).json();
    const mapping = base.mappings.tableMappings.find((m: { id: string }) => m.id === setUp.tableMappingId);
    expect(mapping).toMatchObject({ leftTableId: contacts.id, rightTableId: setUp.created.externalTableId });
    expect(mapping.columnMappings).toHaveLength(setUp.created.columns.length);
    expect(await targetTables()).toContain('contacts');

    // Mapped already: refused with why.
    const again = await post(`/rest/generate-schema/setup/${contacts.id}`);
    expect(again.statusCode).toBe(409);
    expect(again.json().response.userFacingMessage).toMatch(/mapped already/);
  });

  it('sets up every table of an app that has no partner, and says why it skipped the others', async () => {
    const res = await post(`/rest/generate-schema/setup/tables/${leftBaseId}`);
    expect(res.statusCode, res.body).toBe(201);
    const { setUp, skipped } = res.json();
    const skippedBy = Object.fromEntries(
      skipped.map((s: { name: string; reason: string }) => [s.name, s.reason]),
    );
    expect(skippedBy.contacts).toMatch(/mapped already/);
    // companies was created by the job above but never mapped: the other app has that name.
    expect(skippedBy.companies).toMatch(/already has a table named "companies"/);
    const expected = crm
      .map((x) => x.name)
      .filter((n) => n !== 'contacts' && n !== 'companies')
      .sort();
    expect(setUp.map((s: { created: { name: string } }) => s.created.name).sort()).toEqual(expected);
  });

  it("refuses another user's tables and apps (404)", async () => {
    expect(
      (await post(`/rest/generate-schema/setup/${tableNamed('contacts').id}`, {}, other.auth)).statusCode,
    ).toBe(404);
    expect((await post(`/rest/generate-schema/setup/tables/${leftBaseId}`, {}, other.auth)).statusCode).toBe(
      404,
    );
    expect(
      (
        await post(
          `/rest/generate-schema/${rightBaseId}/create-tables-async`,
          { sourceTableIds: [tableNamed('contacts').id] },
          other.auth,
        )
      ).statusCode,
    ).toBe(404);
  });
});
