import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// A first sync between two PostgreSQL tables larger than one page, where each record's partner is
// on a different page of the other side: every pair must still be matched, none created twice.
const ROWS = 12_000;
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };

const sql = (url: string, text: string) => query(url, text);

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'matching@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `match_${side}_${suffix}`);
    urls[side] = databaseUrl(`match_${side}_${suffix}`);
    await sql(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  // Left in one order, right in the reverse one (and typed differently): partners sit pages apart.
  await sql(
    urls.left,
    `insert into people (email, name) select 'p' || g || '@example.com', 'Left ' || g from generate_series(1, ${ROWS}) g`,
  );
  await sql(
    urls.right,
    `insert into people (email, name) select upper('P' || g || '@example.com'), 'Right ' || g from generate_series(${ROWS}, 1, -1) g`,
  );
});
afterAll(async () => t.close());

describe('first sync of tables larger than a page', () => {
  it('matches every pair across pages and creates nothing twice', async () => {
    const core = await setUpPeopleSync(api, urls, { name: 'Matching', conflictWinnerSide: 'left' });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    for (let i = 0; i < 1200; i++) {
      const done = await t.ctx.db
        .selectFrom('sync_log')
        .select(['status', 'error'])
        .where('core_base_id', '=', core.id)
        .where('status', 'in', ['done', 'failed'])
        .execute();
      if (done.length > 0) {
        expect(done[0]).toMatchObject({ status: 'done', error: null });
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await sql(urls.left, 'select count(*)::int as n from people'))[0]).toEqual({ n: ROWS });
    expect((await sql(urls.right, 'select count(*)::int as n from people'))[0]).toEqual({ n: ROWS });
    // The left side won the first sync's differences: the right took the left's names.
    expect(
      (await sql(urls.right, `select name from people where lower(email) = 'p7@example.com'`))[0],
    ).toEqual({
      name: 'Left 7',
    });
    const links = await t.ctx.db
      .selectFrom('core_meta_record')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('core_base_id', '=', core.id)
      .where('left_remote_id', 'is not', null)
      .where('right_remote_id', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(links.n)).toBe(ROWS);
    const issues = await t.ctx.db
      .selectFrom('sync_error')
      .select('message')
      .where('core_base_id', '=', core.id)
      .execute();
    expect(issues).toEqual([]);
  }, 180_000);
});
