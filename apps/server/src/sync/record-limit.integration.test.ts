import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// The plan's record limit in a live sync (not only when a preview is applied), two real PostgreSQL
// databases through the real queue: new records past the limit are held back with an issue, the
// rest keeps syncing, and the held ones are created once there is room. Nothing is lost.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);
const count = async (side: 'left' | 'right') =>
  Number((await sql(side, 'select count(*)::int as n from people'))[0]?.n);

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'limit@test.test')).auth);
  // Personal: 1,000 records.
  await api('POST', '/rest/users/current/choose-plan', { productType: 'personal' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `rl_${side}_${suffix}`);
    urls[side] = databaseUrl(`rl_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, 990) g`,
  );
});
afterAll(async () => t.close());

describe('the record limit in a live sync', () => {
  it('holds new records past the limit with an issue, and creates them once there is room', async () => {
    const core = await setUpPeopleSync(api, urls, { name: 'Limit' });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(async () => (await count('right')) === 990, 'first sync');

    // 20 new records live: room for 10.
    await sql(
      'left',
      `insert into people (email, name) select 'n' || g || '@example.com', 'New ' || g from generate_series(1, 20) g`,
    );
    const limitIssue = async () =>
      (
        await api(
          'GET',
          `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, status: 'open' }))}`,
        )
      ).items.filter((i: { code: string }) => i.code === 'record_limit');
    await until(async () => (await limitIssue()).length === 1, 'a record-limit issue');
    await until(async () => (await count('right')) === 1000, 'filled up to the limit');
    expect(await count('right')).toBe(1000);
    expect((await limitIssue())[0].userFacingMessage).toMatch(/10 new records were not created/);
    // Edits of synced records go on.
    await sql('left', `update people set name = 'Still syncing' where email = 'p1@example.com'`);
    await until(
      async () =>
        (await sql('right', `select name from people where email = 'p1@example.com'`))[0]?.name ===
        'Still syncing',
      'an edit past the limit',
    );

    // Room again (15 records deleted): the held ones arrive, and the issue resolves.
    await sql(
      'left',
      `delete from people where email in (${Array.from({ length: 15 }, (_, i) => `'p${i + 100}@example.com'`).join(',')})`,
    );
    await until(
      async () => (await count('right')) === 995 && (await count('left')) === 995,
      'the held records created',
    );
    const emails = async (side: 'left' | 'right') =>
      (await sql(side, 'select email from people order by email')).map((r) => r.email);
    expect(await emails('right')).toEqual(await emails('left'));
    await until(async () => (await limitIssue()).length === 0, 'the issue resolved');
  }, 120_000);
});
