import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// A first sync between two PostgreSQL tables larger than one page, where each record's partner is
// on a different page of the other side: every pair must still be matched, none created twice.
const ROWS = 12_000;
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };

function urlOf(database: string) {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${database}`;
  return u.toString();
}

async function sql(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'matching@test.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, ...json },
    payload: { productType: 'enterprise' },
  });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `match_${side}_${suffix}`);
    urls[side] = urlOf(`match_${side}_${suffix}`);
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

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload ? { ...user.auth, ...json } : user.auth,
    ...(payload ? { payload } : {}),
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

describe('first sync of tables larger than a page', () => {
  it('matches every pair across pages and creates nothing twice', async () => {
    const core = await api('POST', '/rest/core-bases', { name: 'Matching' });
    for (const side of ['left', 'right'] as const) {
      const conn = await api('POST', '/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: urls[side] },
      });
      await api('POST', '/rest/external-bases', {
        type: 'postgresql',
        name: side,
        remoteId: 'public',
        coreBaseId: core.id,
        externalConnectionId: conn.id,
        side,
      });
    }
    const full = await api('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
    const table = (side: 'leftExternalBase' | 'rightExternalBase') => full[side].externalTables[0];
    const col = (side: 'leftExternalBase' | 'rightExternalBase', name: string) =>
      table(side).externalColumns.find((c: { name: string }) => c.name === name).id;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: table('leftExternalBase').id,
            rightTableId: table('rightExternalBase').id,
            matchOnFieldId: col('leftExternalBase', 'email'),
            conflictWinnerSide: 'left',
            columnMappings: ['email', 'name'].map((n) => ({
              leftColumnId: col('leftExternalBase', n),
              rightColumnId: col('rightExternalBase', n),
            })),
          },
        ],
      },
    });
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
