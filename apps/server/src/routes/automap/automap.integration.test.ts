import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDemoDatabases } from '../../demo/demo-databases';

let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let coreBaseId: string;
type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
let leftTables: Table[];
let rightTables: Table[];
const json = { 'content-type': 'application/json' };

async function connectDemo(db: string, side: 'left' | 'right') {
  const conn = await t.app.inject({
    method: 'POST',
    url: `/rest/demo-databases/${db}/connect`,
    headers: user.auth,
  });
  expect(conn.statusCode).toBe(201);
  const res = await t.app.inject({
    method: 'POST',
    url: '/rest/external-bases',
    headers: { ...user.auth, ...json },
    payload: {
      type: 'postgresql',
      name: db,
      remoteId: 'public',
      coreBaseId,
      externalConnectionId: conn.json().id,
      side,
    },
  });
  expect(res.statusCode).toBe(201);
  return res.json()[side === 'left' ? 'leftExternalBase' : 'rightExternalBase'].externalTables as Table[];
}

const tableId = (tables: Table[], name: string) => tables.find((x) => x.name === name)?.id as string;
const columnId = (tables: Table[], table: string, name: string) =>
  tables.find((x) => x.name === table)?.externalColumns.find((c) => c.name === name)?.id as string;

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  await ensureDemoDatabases((db = 'postgres') => t.ctx.embeddedDatabaseUrl?.(db) as string);
  user = await signUp(t.app, 'automap@test.test');
  other = await signUp(t.app, 'someone-else@test.test');
  for (const u of [user, other]) {
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...u.auth, ...json },
      payload: { productType: 'pro' },
    });
  }
  coreBaseId = (
    await t.app.inject({
      method: 'POST',
      url: '/rest/core-bases',
      headers: { ...user.auth, ...json },
      payload: { name: 'CRM and newsletter' },
    })
  ).json().id;
  leftTables = await connectDemo('demo_crm', 'left');
  rightTables = await connectDemo('demo_newsletter', 'right');
});
afterAll(async () => t?.close());

describe('automap over the demo databases', () => {
  it('proposes contacts ↔ subscribers and companies ↔ organisations, with reasons, from an empty body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/rest/ai-table-mapper/${coreBaseId}/automap`,
      headers: user.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const pairs = body.proposals.map(
      (p: { leftTableName: string; rightTableName: string }) => `${p.leftTableName}=${p.rightTableName}`,
    );
    expect(pairs.sort()).toEqual(['companies=organisations', 'contacts=subscribers']);
    const people = body.proposals.find((p: { leftTableName: string }) => p.leftTableName === 'contacts');
    expect(people).toMatchObject({
      leftTableId: tableId(leftTables, 'contacts'),
      rightTableId: tableId(rightTables, 'subscribers'),
      nameMatch: 'synonym',
      existingTableMappingId: null,
    });
    expect(people.explanation).toMatch(/contacts ~ subscribers/);
    expect(people.explanation).toMatch(/\d+ of \d+ fields match/);
    // Each pair comes with the field to match existing records on, and why (issue 17: without one,
    // the first sync created the 15 organisations both apps have again).
    expect(people.matchField).toMatchObject({
      leftColumnId: columnId(leftTables, 'contacts', 'email'),
      rightColumnId: columnId(rightTables, 'subscribers', 'email'),
      secondaryLeftColumnId: null,
    });
    expect(people.matchField.reason).toMatch(/email/);
    const orgs = body.proposals.find((p: { leftTableName: string }) => p.leftTableName === 'companies');
    expect(orgs.matchField).toMatchObject({
      leftColumnId: columnId(leftTables, 'companies', 'name'),
      rightColumnId: columnId(rightTables, 'organisations', 'name'),
      secondaryLeftColumnId: null,
    });
    expect(orgs.matchField.reason).toBe(
      '15 of 15 organisation names also exist in companies; unique on both sides',
    );
    expect(body.leftExternalBaseId).toBeTruthy();
    expect(body.source).toBe('rules');
    // The databases were read for samples, read-only: no change capture was installed.
    expect(body.samples).toHaveLength(4);
    expect(
      body.samples.every((s: { status: string; rows: number }) => s.status === 'used' && s.rows > 0),
    ).toBe(true);
    const crm = new pg.Client({ connectionString: t.ctx.embeddedDatabaseUrl?.('demo_crm') });
    await crm.connect();
    try {
      const triggers = await crm.query(
        `select 1 from information_schema.triggers where event_object_table in ('contacts', 'companies')`,
      );
      expect(triggers.rowCount).toBe(0);
    } finally {
      await crm.end();
    }
  });

  it('proposes field pairs with email as the match field, and a saved pair shows as existing', async () => {
    const leftTableId = tableId(leftTables, 'contacts');
    const rightTableId = tableId(rightTables, 'subscribers');
    const res = await t.app.inject({
      method: 'POST',
      url: `/rest/ai-field-mapper/${coreBaseId}/automap`,
      headers: { ...user.auth, ...json },
      payload: { leftTableId, rightTableId },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const email = {
      left: columnId(leftTables, 'contacts', 'email'),
      right: columnId(rightTables, 'subscribers', 'email'),
    };
    expect(body.matchField).toMatchObject({ leftColumnId: email.left, rightColumnId: email.right });
    expect(body.matchOnFieldId).toBe(email.left);
    expect(body.matchOnSecondaryFieldId).toBeNull();
    expect(body.matchReason).toMatch(/email addresses/);
    // The field mapper proposes the same for companies ↔ organisations: their names.
    const orgs = (
      await t.app.inject({
        method: 'POST',
        url: `/rest/ai-field-mapper/${coreBaseId}/automap`,
        headers: { ...user.auth, ...json },
        payload: {
          leftTableId: tableId(leftTables, 'companies'),
          rightTableId: tableId(rightTables, 'organisations'),
        },
      })
    ).json();
    expect(orgs.matchOnFieldId).toBe(columnId(leftTables, 'companies', 'name'));
    expect(orgs.matchField.rightColumnId).toBe(columnId(rightTables, 'organisations', 'name'));
    expect(orgs.matchReason).toBe(
      '15 of 15 organisation names also exist in companies; unique on both sides',
    );
    const byName = Object.fromEntries(
      body.proposals.map((p: { leftColumnName: string; rightColumnName: string }) => [p.leftColumnName, p]),
    );
    expect(byName.email).toMatchObject({
      rightColumnName: 'email',
      nameMatch: 'exact',
      syncDirection: 'both',
    });
    expect(byName.full_name).toMatchObject({ rightColumnName: 'name', nameMatch: 'synonym' });
    // Each app's own ids and foreign keys are not paired.
    expect(byName.id).toBeUndefined();
    expect(byName.company_id).toBeUndefined();
    expect(body.unmatchedLeft.find((c: { name: string }) => c.name === 'company_id').reason).toMatch(
      /linked/,
    );
    expect(body.samples.map((s: { status: string }) => s.status)).toEqual(['used', 'used']);

    // With companies ↔ organisations mapped in the same go, the two foreign keys pair up.
    const linked = await t.app.inject({
      method: 'POST',
      url: `/rest/ai-field-mapper/${coreBaseId}/automap`,
      headers: { ...user.auth, ...json },
      payload: {
        leftTableId,
        rightTableId,
        plannedTablePairs: [
          {
            leftTableId: tableId(leftTables, 'companies'),
            rightTableId: tableId(rightTables, 'organisations'),
          },
        ],
      },
    });
    expect(
      linked.json().proposals.find((p: { leftColumnName: string }) => p.leftColumnName === 'company_id'),
    ).toMatchObject({ rightColumnName: 'organisation_id', syncDirection: 'both' });

    // Save the proposals as a table mapping, then ask again by its id.
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`,
      headers: { ...user.auth, ...json },
      payload: {
        mappings: {
          tableMappings: [
            {
              leftTableId,
              rightTableId,
              matchOnFieldId: body.matchOnFieldId,
              columnMappings: body.proposals.map(
                (p: { leftColumnId: string; rightColumnId: string; syncDirection: string }) => ({
                  leftColumnId: p.leftColumnId,
                  rightColumnId: p.rightColumnId,
                  syncDirection: p.syncDirection,
                }),
              ),
            },
          ],
        },
      },
    });
    expect(patch.statusCode).toBe(200);
    const tableMappingId = patch.json().mappings.tableMappings[0].id;
    const again = await t.app.inject({
      method: 'POST',
      url: `/rest/ai-field-mapper/${coreBaseId}/automap`,
      headers: { ...user.auth, ...json },
      payload: { tableMappingId, useSamples: false },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().tableMappingId).toBe(tableMappingId);
    expect(
      again
        .json()
        .proposals.every((p: { existingColumnMappingId: string | null }) => p.existingColumnMappingId),
    ).toBe(true);
    expect(again.json().samples.map((s: { status: string }) => s.status)).toEqual([
      'not_requested',
      'not_requested',
    ]);
    const tables = await t.app.inject({
      method: 'POST',
      url: `/rest/ai-table-mapper/${coreBaseId}/automap`,
      headers: { ...user.auth, ...json },
      payload: { useSamples: false },
    });
    const people = tables
      .json()
      .proposals.find((p: { leftTableId: string }) => p.leftTableId === leftTableId);
    expect(people.existingTableMappingId).toBe(tableMappingId);
  });

  it('refuses bad bodies, tables of the wrong side, and other users (404)', async () => {
    const contacts = tableId(leftTables, 'contacts');
    const subscribers = tableId(rightTables, 'subscribers');
    const post = (url: string, payload: unknown, auth = user.auth) =>
      t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload: payload as object });
    expect(
      (await post(`/rest/ai-field-mapper/${coreBaseId}/automap`, { leftTableId: contacts })).statusCode,
    ).toBe(400);
    const swapped = await post(`/rest/ai-field-mapper/${coreBaseId}/automap`, {
      leftTableId: subscribers,
      rightTableId: contacts,
    });
    expect(swapped.statusCode).toBe(400);
    expect(swapped.json().response.userFacingMessage).toMatch(/left app/);
    const theirs = await post(`/rest/ai-table-mapper/${coreBaseId}/automap`, {}, other.auth);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().response.userFacingMessage).toBe('Sync was not found.');
    const theirFields = await post(
      `/rest/ai-field-mapper/${coreBaseId}/automap`,
      { leftTableId: contacts, rightTableId: subscribers },
      other.auth,
    );
    expect(theirFields.statusCode).toBe(404);
    // A sync with one side connected cannot be automapped yet.
    const lonely = (await post('/rest/core-bases', {})).json().id;
    expect((await post(`/rest/ai-table-mapper/${lonely}/automap`, {})).statusCode).toBe(409);
  });

  it('documents both routes in the OpenAPI description', async () => {
    const doc = (await t.app.inject({ url: '/api/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/rest/ai-table-mapper/{coreBaseId}/automap',
        '/rest/ai-field-mapper/{coreBaseId}/automap',
      ]),
    );
  });
});
