import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// A field one side may leave empty mapped to a column the other side requires (NOT NULL, no
// default): the preview says so before anything is written, apply writes every other record, the
// one record waits as one clear issue, and filling the value in syncs it.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'required@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `rq_${side}_${suffix}`);
    urls[side] = databaseUrl(`rq_${side}_${suffix}`);
  }
  await sql('left', 'create table people (id serial primary key, email text not null unique, name text)');
  await sql(
    'right',
    'create table people (id serial primary key, email text not null unique, name text not null)',
  );
  await sql(
    'left',
    `insert into people (email, name) values ('ada@x.test', 'Ada'), ('nameless@x.test', null), ('grace@x.test', 'Grace')`,
  );
});
afterAll(async () => t.close());

describe('a field the other app requires', () => {
  it('is reported in the preview, holds back only its record, and syncs it once filled in', async () => {
    const sync = await setUpPeopleSync(api, urls, { name: 'required' });
    const preview = await api('POST', '/rest/sync-preview/create', { coreBaseId: sync.id });
    let status = '';
    await until(async () => {
      status = (await api('GET', `/rest/sync-preview/${preview.id}`)).status;
      return ['in_review', 'planning_problem'].includes(status);
    }, 'the preview planned');
    expect(status).toBe('in_review');
    const problems = await api('GET', `/rest/sync-preview/${preview.id}/problems?kind=value`);
    expect(problems.items).toEqual([
      expect.objectContaining({ kind: 'value', message: expect.stringContaining('requires a value') }),
    ]);

    await api('PATCH', `/rest/sync-preview/${preview.id}`, { status: 'applying' });
    await until(
      async () => (await api('GET', `/rest/sync-preview/${preview.id}`)).status === 'done',
      'applied',
    );
    expect((await sql('right', 'select email from people order by email')).map((r) => r.email)).toEqual([
      'ada@x.test',
      'grace@x.test',
    ]);
    const filters = encodeURIComponent(JSON.stringify({ coreBaseId: sync.id, status: 'open' }));
    const issues = (await api('GET', `/rest/sync-errors?filters=${filters}&take=100`)).items;
    // Named as a person knows the record (its match field), not by its id alone.
    expect(issues).toEqual([
      expect.objectContaining({ code: 'required_missing', side: 'left', recordName: 'nameless@x.test' }),
    ]);
    const causes = (await api('GET', `/rest/sync-errors/by-cause?filters=${filters}`)).items;
    expect(causes.map((c: { records: unknown }) => c.records)).toEqual([
      [{ remoteId: issues[0].remoteId, name: 'nameless@x.test' }],
    ]);

    await sql('left', `update people set name = 'No longer nameless' where email = 'nameless@x.test'`);
    await until(
      async () =>
        (await sql('right', `select name from people where email = 'nameless@x.test'`))[0]?.name ===
        'No longer nameless',
      'the filled-in record synced',
    );
    // Its issue is resolved by the write that carried the value.
    await until(
      async () => (await api('GET', `/rest/sync-errors?filters=${filters}&take=100`)).items.length === 0,
      'the issue resolved',
    );
  });
});
