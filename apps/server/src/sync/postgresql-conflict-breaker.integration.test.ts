import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Two real PostgreSQL databases through the real queue: a conflict follows the winner side, and a
// mass delete on one side trips the breaker instead of emptying the other.
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

async function sql(side: 'left' | 'right', text: string) {
  const client = new pg.Client({ connectionString: urls[side] });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

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

beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'conflicts@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `cb_${side}_${suffix}`);
    urls[side] = urlOf(`cb_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) select 'c' || g || '@example.com', 'Person ' || g from generate_series(1, 20) g`,
  );
});
afterAll(async () => t.close());

describe('PostgreSQL <-> PostgreSQL: conflicts and the mass-delete breaker', () => {
  it('settles a conflict by the winner side and refuses to carry a mass delete', async () => {
    const core = await api('POST', '/rest/core-bases', { name: 'Conflicts' });
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
    const table = (s: 'leftExternalBase' | 'rightExternalBase') => full[s].externalTables[0];
    const col = (s: 'leftExternalBase' | 'rightExternalBase', name: string) =>
      table(s).externalColumns.find((c: { name: string }) => c.name === name).id;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: table('leftExternalBase').id,
            rightTableId: table('rightExternalBase').id,
            matchOnFieldId: col('leftExternalBase', 'email'),
            conflictWinnerSide: 'right',
            columnMappings: ['email', 'name'].map((n) => ({
              leftColumnId: col('leftExternalBase', n),
              rightColumnId: col('rightExternalBase', n),
            })),
          },
        ],
      },
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(
      async () => (await sql('right', 'select count(*)::int as n from people'))[0]?.n === 20,
      'first sync',
    );

    // Both sides change the same field of the same record before a run sees either: the right wins.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'off' });
    await sql('left', `update people set name = 'Left edit' where email = 'c1@example.com'`);
    await sql('right', `update people set name = 'Right edit' where email = 'c1@example.com'`);
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(
      async () =>
        (await sql('left', `select name from people where email = 'c1@example.com'`))[0]?.name ===
        'Right edit',
      'the winner reaches the loser',
    );
    expect((await sql('right', `select name from people where email = 'c1@example.com'`))[0]?.name).toBe(
      'Right edit',
    );

    // Most of one side deleted at once: nothing is deleted on the other, and the user is told.
    await sql('left', `delete from people where email <> 'c1@example.com' and email <> 'c2@example.com'`);
    await until(async () => {
      const issues = await api(
        'GET',
        `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, code: 'mass_delete' }))}`,
      );
      return issues.total === 1;
    }, 'a mass-delete issue');
    expect((await sql('right', 'select count(*)::int as n from people'))[0]?.n).toBe(20);
  }, 120_000);
});
