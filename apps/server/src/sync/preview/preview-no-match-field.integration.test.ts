import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../test/memory-connector';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

// Issue 17: a table pair without a match field creates every record on the other side, even the
// ones both apps already have. The preview says so, with how many, before anything is written.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
const backend = new MemoryBackend();
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestApp();
  t.ctx.runtimeConnectors.register('memory', () => backend.connector(5));
  user = await signUp(t.app, 'no-match-field@test.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, ...json },
    payload: { productType: 'pro' },
  });
});
afterAll(async () => t?.close());

const post = (url: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...user.auth, ...json }, payload });
const get = async (url: string) => (await t.app.inject({ url, headers: user.auth })).json();

/** companies (left) ↔ organisations (right) in memory apps, mapped by name and website. */
async function createSync(prefix: string, matchOnName: boolean) {
  const db = t.ctx.db;
  const core = (await post('/rest/core-bases', { name: prefix })).json();
  const conn = await db
    .insertInto('external_connection')
    .values({
      owner_id: user.userId,
      type: 'memory',
      name: 'memory',
      secrets: t.ctx.secretBox.seal({ connectionItems: {} }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const table = async (side: 'left' | 'right', name: string, fields: [string, string][]) => {
    const eb = await db
      .insertInto('external_base')
      .values({
        owner_id: user.userId,
        core_base_id: core.id,
        external_connection_id: conn.id,
        type: 'memory',
        name: side,
        remote_id: side,
        side,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const tb = await db
      .insertInto('external_table')
      .values({
        owner_id: user.userId,
        external_base_id: eb.id,
        remote_id: `${prefix}-${name}`,
        name,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ids: Record<string, string> = {};
    for (const [field, type] of fields) {
      ids[field] = (
        await db
          .insertInto('external_column')
          .values({
            owner_id: user.userId,
            external_table_id: tb.id,
            remote_id: field,
            name: field,
            field_type: type,
            options: '{}',
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    }
    return { tableId: tb.id, ids };
  };
  const left = await table('left', 'companies', [
    ['name', 'text'],
    ['domain', 'text'],
  ]);
  const right = await table('right', 'organisations', [
    ['name', 'text'],
    ['website', 'url'],
  ]);
  const patch = await t.app.inject({
    method: 'PATCH',
    url: `/rest/core-bases/${core.id}`,
    headers: { ...user.auth, ...json },
    payload: {
      mappings: {
        tableMappings: [
          {
            leftTableId: left.tableId,
            rightTableId: right.tableId,
            matchOnFieldId: matchOnName ? left.ids.name : null,
            columnMappings: [
              { leftColumnId: left.ids.name, rightColumnId: right.ids.name },
              { leftColumnId: left.ids.domain, rightColumnId: right.ids.website },
            ],
          },
        ],
      },
    },
  });
  expect(patch.statusCode, patch.body).toBe(200);
  const companies = backend.table(`${prefix}-companies`);
  const organisations = backend.table(`${prefix}-organisations`);
  for (const n of ['Enigma Labs', 'Kernel Co', 'Apollo Software', 'Only In CRM'])
    companies.userCreate({ name: n, domain: `${n.toLowerCase().replaceAll(' ', '')}.com` });
  for (const n of [' ENIGMA  labs', 'Kernel Co', 'apollo software', 'Only In Newsletter'])
    organisations.userCreate({ name: n, website: null });
  return core.id as string;
}

const previewIds = new Map<string, string>();

async function preview(coreBaseId: string) {
  const created = await post('/rest/sync-preview/create', { coreBaseId });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  previewIds.set(coreBaseId, id);
  let p: { status: string } = { status: '' };
  for (let i = 0; i < 200 && !['in_review', 'planning_problem'].includes(p.status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    p = await get(`/rest/sync-preview/${id}`);
  }
  return { status: p.status, problems: (await get(`/rest/sync-preview/${id}/problems`)).items };
}

describe('preview of a table pair without a match field', () => {
  it('warns that records both apps have would be duplicated, without blocking the preview', async () => {
    const { status, problems } = await preview(await createSync('nomatch', false));
    expect(status).toBe('in_review');
    expect(problems).toEqual([
      expect.objectContaining({
        kind: 'no_match_field',
        message:
          '3 of 4 company names also exist in organisations: pick a match field or they will be duplicated.',
      }),
    ]);
  });

  it('says nothing of records already linked: previewed again after the first sync, they are pairs', async () => {
    const coreBaseId = await createSync('linked', false);
    expect((await preview(coreBaseId)).problems).toHaveLength(1);
    // Applied as it is (the user chose to): every record is created on the other side and linked.
    const id = previewIds.get(coreBaseId) as string;
    const applying = await t.app.inject({
      method: 'PATCH',
      url: `/rest/sync-preview/${id}`,
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: { status: 'applying' },
    });
    expect(applying.statusCode, applying.body).toBe(200);
    let status = '';
    for (let i = 0; i < 300 && status !== 'done'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await get(`/rest/sync-preview/${id}`)).status;
    }
    expect(status).toBe('done');
    const again = await preview(coreBaseId);
    expect(again.status).toBe('in_review');
    expect(again.problems).toEqual([]);
  });

  it('says nothing once a match field is chosen', async () => {
    const { status, problems } = await preview(await createSync('withmatch', true));
    expect(status).toBe('in_review');
    expect(problems).toEqual([]);
  });
});
