import { randomBytes } from 'node:crypto';
import type { AirtableSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query } from '../../../test/pg-pair';
import { settleSync } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { airtableRuntimeFactory } from '../../sync/runtime-connectors';

// Blended tables over REST as a user sets them up, synced by the real job queue: two PostgreSQL
// tables (two databases) and the sandbox's Airtable Contacts blended into one table, synced two-way
// with a third app (a PostgreSQL table).
let t: TestApp;
let a: Awaited<ReturnType<typeof signUp>>;
let b: Awaited<ReturnType<typeof signUp>>;
let api: Api;
let apiB: Api;
let sim: AirtableSimulator;

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_SANDBOX: '1' });
  sim = t.ctx.sandbox?.airtable as AirtableSimulator;
  t.ctx.runtimeConnectors.register(
    'airtable',
    airtableRuntimeFactory({
      sandboxUrls: () => t.ctx.sandbox?.urls() ?? [],
      pool: t.ctx.pool,
      client: { rateLimitWaitMs: 250 },
    }),
  );
  a = await signUp(t.app, 'blended-a@test.test');
  b = await signUp(t.app, 'blended-b@test.test');
  api = apiAs(t.app, a.auth);
  apiB = apiAs(t.app, b.auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  await apiB('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});

afterAll(async () => {
  await t.close();
});

async function freshDatabase(prefix: string, ddl: string) {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const url = databaseUrl(name);
  await query(url, ddl);
  return url;
}

/** Raw answer (status and body), for the error cases. */
async function raw(
  auth: Record<string, string>,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: object,
) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload ? { ...auth, 'content-type': 'application/json' } : auth,
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
const col = (tbl: Table, name: string) => {
  const c = tbl.externalColumns.find((x) => x.name === name);
  if (!c) throw new Error(`no column ${name} in ${tbl.name}: ${tbl.externalColumns.map((x) => x.name)}`);
  return c.id;
};

describe('blended tables', () => {
  it('blends two PostgreSQL tables and an Airtable table and syncs them two-way with a third app', async () => {
    const eu = await freshDatabase(
      'blend_eu',
      `create table people (id serial primary key, email text not null unique, name text, city text);
       insert into people (email, name, city) values ('ana@eu.test', 'Ana', 'Lisbon'), ('bo@eu.test', 'Bo', 'Oslo')`,
    );
    const us = await freshDatabase(
      'blend_us',
      `create table people (id serial primary key, email text not null unique, name text);
       insert into people (email, name) values ('cy@us.test', 'Cy'), ('di@us.test', 'Di'), ('ed@us.test', 'Ed')`,
    );
    const hub = await freshDatabase(
      'blend_hub',
      'create table everyone (id serial primary key, email text unique, name text, origin text)',
    );
    const euConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: eu },
    });
    const usConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: us },
    });
    const atConn = await api('POST', '/rest/sandbox-apps/airtable/connect');
    const [atBase] = (await api('PATCH', `/rest/external-connections/${atConn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    const baseId = atBase?.remoteId as string;
    const contacts = sim.state.table(baseId, 'Contacts');
    const contactCount = contacts.records.size;
    const sources = [
      { connectionId: euConn.id, baseRemoteId: 'public', tableRemoteId: 'public.people' },
      { connectionId: usConn.id, baseRemoteId: 'public', tableRemoteId: 'public.people' },
      { connectionId: atConn.id, baseRemoteId: baseId, tableRemoteId: `${baseId}/${contacts.id}` },
    ];

    // generate-config: Email and Name aligned across the three sources; record ids left out.
    const proposal = await api('POST', '/rest/blended-tables/generate-config', { sources });
    const emailField = proposal.fields.find((f: { name: string }) => f.name === 'email');
    const nameField = proposal.fields.find((f: { name: string }) => f.name === 'name');
    const emailId = contacts.fields.find((f) => f.name === 'Email')?.id;
    const nameId = contacts.fields.find((f) => f.name === 'Name')?.id;
    expect(emailField.sourceFields).toEqual(['email', 'email', emailId]);
    expect(nameField.sourceFields).toEqual(['name', 'name', nameId]);
    expect(proposal.fields.some((f: { name: string }) => f.name === 'id')).toBe(false);
    const proposedNames = proposal.sources.map((s: { name: string }) => s.name);
    expect(new Set(proposedNames).size).toBe(3);
    expect(proposedNames[2]).toBe('Contacts');

    // The user edits: names the sources, renames fields, keeps Email, Name and City only.
    const named = [
      { ...sources[0], name: 'EU' },
      { ...sources[1], name: 'US' },
      { ...sources[2], name: 'Airtable' },
    ];
    const fields = [
      { ...emailField, name: 'Email' },
      { ...nameField, name: 'Name' },
      proposal.fields.find((f: { name: string }) => f.name === 'city'),
    ].map(({ reasons: _r, ...f }) => f);
    const preview = await api('POST', '/rest/blended-tables/preview', {
      sources: named,
      fields,
      perSource: 2,
    });
    expect(preview.rows).toHaveLength(6);
    expect(preview.rows.map((r: { source: string }) => r.source)).toEqual([
      'EU',
      'EU',
      'US',
      'US',
      'Airtable',
      'Airtable',
    ]);
    expect(preview.rows[0]).toMatchObject({
      sourceIndex: 0,
      fields: { f1: 'ana@eu.test', f2: 'Ana', f3: 'Lisbon', source: 'EU' },
    });
    expect(preview.rows[2].id).toMatch(/^1:/);

    const blended = await api('POST', '/rest/blended-tables', {
      name: 'All people',
      sources: named,
      defaultSource: 0,
      fields,
    });
    expect(blended).toMatchObject({ name: 'All people', defaultSource: 0, usedBySyncs: 0 });
    expect((await api('GET', '/rest/blended-tables')).items.map((x: { id: string }) => x.id)).toEqual([
      blended.id,
    ]);

    // The blended table is a table of the virtual base "Blended tables", attached like any app's base.
    const bases = await api(
      'PATCH',
      `/rest/external-connections/${blended.connectionId}/fetch-base-previews`,
      {},
    );
    expect(bases.basePreviews).toEqual([{ remoteId: 'blended', name: 'Blended tables' }]);
    const hubConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: hub },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Everyone' });
    await api('POST', '/rest/external-bases', {
      type: 'blended',
      name: 'Blended tables',
      remoteId: 'blended',
      coreBaseId: core.id,
      externalConnectionId: blended.connectionId,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Hub',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: hubConn.id,
      side: 'right',
    });
    const lt = (full.leftExternalBase.externalTables as Table[]).find(
      (x) => x.name === 'All people',
    ) as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'everyone') as Table;
    expect(lt.externalColumns.map((c) => c.name).sort()).toEqual(['Email', 'Name', 'Source', 'city']);
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email'),
            columnMappings: [
              { leftColumnId: col(lt, 'Email'), rightColumnId: col(rt, 'email') },
              { leftColumnId: col(lt, 'Name'), rightColumnId: col(rt, 'name') },
              {
                leftColumnId: col(lt, 'Source'),
                rightColumnId: col(rt, 'origin'),
                syncDirection: 'left_to_right',
              },
            ],
          },
        ],
      },
    });

    // First sync: every source's rows reach the third app, each with its Source.
    const total = 2 + 3 + contactCount;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    const count = async () => (await query(hub, 'select count(*)::int as n from everyone'))[0]?.n;
    await settleSync(t.ctx.db, core.id, async () => (await count()) === total, 90_000);
    const origins = await query(
      hub,
      'select origin, count(*)::int as n from everyone group by origin order by origin',
    );
    expect(origins).toEqual([
      { origin: 'Airtable', n: contactCount },
      { origin: 'EU', n: 2 },
      { origin: 'US', n: 3 },
    ]);
    expect(await query(hub, `select name, origin from everyone where email = 'di@us.test'`)).toEqual([
      { name: 'Di', origin: 'US' },
    ]);
    const syncNow = async (check: () => Promise<boolean>) => {
      await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
      await settleSync(t.ctx.db, core.id, check, 60_000);
    };

    // An edit in the third app reaches the right source table (US), and no other.
    await query(hub, `update everyone set name = 'Di edited in hub' where email = 'di@us.test'`);
    await syncNow(
      async () =>
        (await query(us, `select name from people where email = 'di@us.test'`))[0]?.name ===
        'Di edited in hub',
    );
    expect(await query(eu, `select count(*)::int as n from people where name like '%hub%'`)).toEqual([
      { n: 0 },
    ]);

    // An edit in a source (Airtable) reaches the third app.
    const first = [...contacts.records.values()][0];
    const firstEmail = first?.cells.get(emailId as string) as string;
    sim.mutateRecord(baseId, 'Contacts', first?.id as string, { Name: 'Edited in Airtable' });
    await syncNow(
      async () =>
        (await query(hub, 'select name from everyone where email = $1', [firstEmail]))[0]?.name ===
        'Edited in Airtable',
    );

    // And an edit in a PostgreSQL source (EU).
    await query(eu, `update people set name = 'Bo edited in EU' where email = 'bo@eu.test'`);
    await syncNow(
      async () =>
        (await query(hub, `select name from everyone where email = 'bo@eu.test'`))[0]?.name ===
        'Bo edited in EU',
    );

    // A create in the third app lands in the default source (EU), and comes back with its Source.
    await query(hub, `insert into everyone (email, name) values ('new@hub.test', 'New in hub')`);
    await syncNow(
      async () =>
        (await query(eu, `select name from people where email = 'new@hub.test'`))[0]?.name === 'New in hub',
    );
    expect(await query(us, `select count(*)::int as n from people where email = 'new@hub.test'`)).toEqual([
      { n: 0 },
    ]);
    expect(
      [...sim.state.table(baseId, 'Contacts').records.values()].some(
        (r) => r.cells.get(emailId as string) === 'new@hub.test',
      ),
    ).toBe(false);

    // Deleting it is refused while the sync maps it.
    const refused = await raw(a.auth, 'DELETE', `/rest/blended-tables/${blended.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.response.userFacingMessage).toMatch(/used by a sync/);
    expect((await api('GET', '/rest/blended-tables')).items[0].usedBySyncs).toBe(1);

    // Another user can neither see nor use it, nor A's connections as sources.
    expect((await apiB('GET', '/rest/blended-tables')).items).toEqual([]);
    expect((await raw(b.auth, 'DELETE', `/rest/blended-tables/${blended.id}`)).status).toBe(404);
    expect((await raw(b.auth, 'POST', '/rest/blended-tables/generate-config', { sources })).status).toBe(404);
    expect(
      (await raw(b.auth, 'POST', '/rest/blended-tables/preview', { sources: named, fields })).status,
    ).toBe(404);
    const coreB = await apiB('POST', '/rest/core-bases', { name: "B's" });
    const attach = await raw(b.auth, 'POST', '/rest/external-bases', {
      type: 'blended',
      name: 'Blended tables',
      remoteId: 'blended',
      coreBaseId: coreB.id,
      externalConnectionId: blended.connectionId,
      side: 'left',
    });
    expect(attach.status).toBe(404);

    // A source connection cannot be deleted from under it.
    const connGone = await raw(a.auth, 'DELETE', `/rest/external-connections/${usConn.id}`);
    expect(connGone.status).toBe(409);
    expect(connGone.body.response.userFacingMessage).toMatch(/source of the blended table "All people"/);

    // Once the sync is gone, it can be deleted.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'off' });
    await settleSync(t.ctx.db, core.id, async () => true, 30_000);
    await api('DELETE', `/rest/core-bases/${core.id}?cascade=true`);
    expect(await api('DELETE', `/rest/blended-tables/${blended.id}`)).toEqual({ deleted: true });
    expect((await api('GET', '/rest/blended-tables')).items).toEqual([]);
    expect(await api('DELETE', `/rest/external-connections/${usConn.id}`)).toEqual({ deleted: true });
  }, 240_000);

  it('answers bad input with the error envelope', async () => {
    const one = await raw(a.auth, 'POST', '/rest/blended-tables/generate-config', {
      sources: [
        { connectionId: '00000000-0000-4000-8000-000000000000', baseRemoteId: 'x', tableRemoteId: 'y' },
      ],
    });
    expect(one.status).toBe(400);
    expect(one.body).toMatchObject({ statusCode: 400 });
    const blendedAsSource = await raw(a.auth, 'POST', '/rest/external-connections', {
      type: 'blended',
      connectionItems: {},
    });
    expect(blendedAsSource.status).toBe(400);
    const pg = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: {
        connectionString: await freshDatabase(
          'blend_bad',
          'create table t (id serial primary key, email text)',
        ),
      },
    });
    const src = (name: string) => ({
      connectionId: pg.id,
      baseRemoteId: 'public',
      tableRemoteId: 'public.t',
      name,
    });
    const mismatch = await raw(a.auth, 'POST', '/rest/blended-tables', {
      name: 'Bad',
      sources: [src('A'), { ...src('B'), tableRemoteId: 'public.missing' }],
      fields: [{ name: 'Email', type: 'email', sourceFields: ['email', 'email'] }],
    });
    expect(mismatch.status).toBe(404);
    expect(mismatch.body).toMatchObject({
      statusCode: 404,
      response: { code: 'not_found' },
    });
    const twice = await raw(a.auth, 'POST', '/rest/blended-tables', {
      name: 'Bad',
      sources: [src('A'), src('B')],
      fields: [{ name: 'Email', type: 'email', sourceFields: ['email', 'email'] }],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.response.userFacingMessage).toMatch(/same table/);
  });
});
