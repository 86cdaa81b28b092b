import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';

// The right table has a column that must hold a value and that no field of the pair writes: the
// preview says so before apply (how many new records it concerns), instead of one issue per record.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'required@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => t?.close());

async function previewProblems(rightTable: string) {
  const urls = { left: '', right: '' };
  for (const side of ['left', 'right'] as const) {
    const name = `req_${side}_${suffix}_${rightTable.length}`;
    await ensureDatabase(inject('adminDatabaseUrl'), name);
    urls[side] = databaseUrl(name);
  }
  await query(
    urls.left,
    'create table people (id serial primary key, email text not null unique, name text)',
  );
  await query(
    urls.left,
    `insert into people (email, name) values ('a@x.test', 'A'), ('b@x.test', 'B'), ('c@x.test', 'C')`,
  );
  await query(urls.right, rightTable);
  const sync = await setUpPeopleSync(api, urls, { name: 'Required' });
  const created = await api('POST', '/rest/sync-preview/create', { coreBaseId: sync.id });
  let status = '';
  for (let i = 0; i < 200 && !['in_review', 'planning_problem'].includes(status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await api('GET', `/rest/sync-preview/${created.id}`)).status;
  }
  expect(status).toBe('in_review');
  return (await api('GET', `/rest/sync-preview/${created.id}/problems`)).items;
}

describe('preview of creates into a table with a required column no field writes', () => {
  it('warns before apply, naming the column and how many records', async () => {
    const problems = await previewProblems(
      'create table people (id serial primary key, email text not null unique, name text, full_name text not null, note text)',
    );
    expect(problems).toEqual([
      expect.objectContaining({
        kind: 'required_unmapped',
        message:
          '3 new records for people would be refused: full_name needs a value and no field is mapped to it. Map a field to it, or give the column a default.',
      }),
    ]);
  });

  it('says nothing when the required column has a default', async () => {
    const problems = await previewProblems(
      "create table people (id serial primary key, email text not null unique, name text, full_name text not null default 'n/a')",
    );
    expect(problems).toEqual([]);
  });
});
