import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Two real PostgreSQL databases through the real queue: a conflict follows the winner side, and a
// mass delete on one side trips the breaker instead of emptying the other.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };

const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'conflicts@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `cb_${side}_${suffix}`);
    urls[side] = databaseUrl(`cb_${side}_${suffix}`);
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
    const core = await setUpPeopleSync(api, urls, { name: 'Conflicts', conflictWinnerSide: 'right' });
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

    // Held, not dropped: every one of the 18 deletes waits for review, and each decision is kept.
    const held = await api('GET', `/rest/core-bases/${core.id}/delete-approvals?take=100`);
    expect(held.total).toBe(18);
    expect(held.items.every((d: { side: string }) => d.side === 'right')).toBe(true);
    const [approve, reject] = [held.items.slice(0, 9), held.items.slice(9)];
    for (const d of approve) await api('POST', `/rest/delete-approvals/${d.id}/approve`);
    for (const d of reject) await api('POST', `/rest/delete-approvals/${d.id}/reject`);
    const count = async (side: 'left' | 'right') =>
      Number((await sql(side, 'select count(*)::int as n from people'))[0]?.n);
    // Approved: deleted on the right too. Rejected: restored on the left.
    await until(
      async () => (await count('right')) === 11 && (await count('left')) === 11,
      'decisions carried out',
    ).catch(async (e) => {
      // What the sides and the runs did, to tell a race from a slow machine.
      const runs = await t.ctx.db
        .selectFrom('sync_log')
        .select(['trigger', 'counts'])
        .orderBy('started_at')
        .execute();
      const people = async (side: 'left' | 'right') =>
        (await sql(side, 'select email from people order by id')).map((r) => r.email);
      throw new Error(
        `${e.message}: left ${await people('left')}, right ${await people('right')}, runs ${JSON.stringify(runs)}`,
      );
    });
    const names = async (side: 'left' | 'right') =>
      (await sql(side, 'select email from people order by email')).map((r) => r.email);
    expect(await names('left')).toEqual(await names('right'));
  }, 120_000);
});
