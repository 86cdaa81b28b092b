import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Bad input under a live sync, two real PostgreSQL databases through the real queue: a column
// renamed, a table dropped, a grant revoked, a password changed. Each becomes one clear issue on the
// right table pair, record or connection; the other pairs keep syncing; nothing is lost or cleared.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const role = `bad_${suffix}`;
const urls = { left: '', right: '', rightAsRole: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

async function until(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}
type Issue = {
  code: string;
  side: string | null;
  userFacingMessage: string;
  status: string;
  externalConnectionId: string | null;
};
async function openIssues(coreBaseId: string): Promise<Issue[]> {
  const filters = encodeURIComponent(JSON.stringify({ coreBaseId, status: 'open' }));
  return (await api('GET', `/rest/sync-errors?filters=${filters}&take=100`)).items;
}
const cell = async (side: 'left' | 'right', table: string, column: string, where: string) =>
  (await sql(side, `select ${column} as v from ${table} where ${where}`))[0]?.v as string | undefined;

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'bad-input@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `bi_${side}_${suffix}`);
    urls[side] = databaseUrl(`bi_${side}_${suffix}`);
    await sql(
      side,
      `create table people (id serial primary key, email text not null unique, name text);
       create table notes (id serial primary key, title text)`,
    );
  }
  await sql(
    'left',
    `insert into people (email, name) select 'p' || g || '@x.test', 'Person ' || g from generate_series(1, 5) g`,
  );
  await sql('left', `insert into notes (title) values ('one'), ('two'), ('three')`);
  // The right app is reached as a role of its own (the owner of its tables), so a grant can be
  // revoked and a password changed as a database administrator would.
  await sql(
    'right',
    `create role ${role} login password 'first-password';
     grant create, connect on database bi_right_${suffix} to ${role};
     grant usage, create on schema public to ${role};
     alter table people owner to ${role}; alter table notes owner to ${role};
     alter sequence people_id_seq owner to ${role}; alter sequence notes_id_seq owner to ${role};`,
  );
  const u = new URL(urls.right);
  u.username = role;
  u.password = 'first-password';
  urls.rightAsRole = u.toString();
});
afterAll(async () => t.close());

describe('PostgreSQL <-> PostgreSQL: bad input under a live sync', () => {
  it('turns each into one clear issue in the right place and keeps the rest going', async () => {
    const core = await api('POST', '/rest/core-bases', { name: 'Bad input' });
    const conns = { left: '', right: '' };
    for (const side of ['left', 'right'] as const) {
      const conn = await api('POST', '/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: side === 'left' ? urls.left : urls.rightAsRole },
      });
      conns[side] = conn.id;
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
    const table = (s: 'leftExternalBase' | 'rightExternalBase', name: string) =>
      full[s].externalTables.find((x: { name: string }) => x.name === name);
    const col = (s: 'leftExternalBase' | 'rightExternalBase', t: string, name: string) =>
      table(s, t).externalColumns.find((c: { name: string }) => c.name === name).id;
    const pair = (name: string, columns: string[], matchOn: string | null) => ({
      leftTableId: table('leftExternalBase', name).id,
      rightTableId: table('rightExternalBase', name).id,
      matchOnFieldId: matchOn ? col('leftExternalBase', name, matchOn) : null,
      columnMappings: columns.map((c) => ({
        leftColumnId: col('leftExternalBase', name, c),
        rightColumnId: col('rightExternalBase', name, c),
      })),
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [pair('people', ['email', 'name'], 'email'), pair('notes', ['title'], null)],
      },
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(
      async () =>
        (await sql('right', 'select count(*)::int as n from people'))[0]?.n === 5 &&
        (await sql('right', 'select count(*)::int as n from notes'))[0]?.n === 3,
      'first sync',
    );

    // 1. A mapped column renamed on the right under the live sync.
    await sql('right', 'alter table people rename column name to full_name');
    await sql('left', `update people set name = 'Renamed meanwhile' where email = 'p1@x.test'`);
    // A person edits another field of a right row: read without "name", it must not clear the left's.
    await sql('right', `update people set email = 'p2-new@x.test' where email = 'p2@x.test'`);
    await until(
      async () => (await openIssues(core.id)).some((i) => i.code === 'not_found'),
      'a people issue',
    );
    // The other pair keeps going.
    await sql('left', `insert into notes (title) values ('four')`);
    await until(async () => (await cell('right', 'notes', 'count(*)::text', 'true')) === '4', 'notes go on');
    const renamed = (await openIssues(core.id)).filter((i) => i.code === 'not_found');
    expect(renamed, 'one issue for the pair, not one per record').toHaveLength(1);
    expect(renamed[0]).toMatchObject({
      side: 'right',
      userFacingMessage: expect.stringMatching(/^people: .*"name"/),
    });
    expect(await cell('left', 'people', 'name', `email = 'p2@x.test'`), 'nothing cleared').toBe('Person 2');
    // Renamed back: the waiting edits arrive both ways, and the issue resolves itself.
    await sql('right', 'alter table people rename column full_name to name');
    await sql('left', `update people set name = 'Person 3 again' where email = 'p3@x.test'`);
    await until(
      async () =>
        (await cell('right', 'people', 'name', `email = 'p1@x.test'`)) === 'Renamed meanwhile' &&
        (await cell('left', 'people', 'email', `name = 'Person 2'`)) === 'p2-new@x.test',
      'the edits made while renamed',
    );
    await until(async () => (await openIssues(core.id)).length === 0, 'the issue resolved');

    // 2. A grant revoked: the refused records get issues, other records and pairs go on.
    await sql('right', `revoke update on notes from ${role}`);
    await sql('left', `update notes set title = 'one, edited' where title = 'one'`);
    await sql('left', `update people set name = 'Still syncing' where email = 'p4@x.test'`);
    await until(
      async () => (await cell('right', 'people', 'name', `email = 'p4@x.test'`)) === 'Still syncing',
      'people go on',
    );
    await until(
      async () => (await openIssues(core.id)).some((i) => i.code === 'permission_denied'),
      'a permission issue',
    );
    const refused = (await openIssues(core.id)).find((i) => i.code === 'permission_denied');
    expect(refused?.userFacingMessage).toMatch(/permission denied for table notes/);
    const connections = await api('GET', '/rest/external-connections');
    expect(connections.items.every((c: { status: string }) => c.status !== 'broken')).toBe(true);

    // 3. A table dropped on the right: one issue on that pair; people still sync.
    await sql('right', 'drop table notes');
    await sql('left', `insert into notes (title) values ('five')`);
    await sql('left', `update people set name = 'After the drop' where email = 'p5@x.test'`);
    await until(
      async () => (await cell('right', 'people', 'name', `email = 'p5@x.test'`)) === 'After the drop',
      'people after the drop',
    );
    await until(
      async () =>
        (await openIssues(core.id)).some(
          (i) => i.code === 'not_found' && /^notes: /.test(i.userFacingMessage),
        ),
      'a notes issue',
    );

    // 4. The right database stops answering: retried quietly once, then one issue says so; when it
    // is back, the waiting edit arrives and the issue resolves itself.
    const admin = (text: string) => query(inject('adminDatabaseUrl'), text);
    await admin(`alter database bi_right_${suffix} allow_connections false`);
    await admin(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = 'bi_right_${suffix}'`,
    );
    await sql('left', `update people set name = 'During the outage' where email = 'p3@x.test'`);
    await until(
      async () => (await openIssues(core.id)).some((i) => /keeps retrying/.test(i.userFacingMessage)),
      'an outage issue',
      60_000,
    );
    const outage = (await openIssues(core.id)).find((i) => /keeps retrying/.test(i.userFacingMessage));
    expect(outage).toMatchObject({
      side: 'right',
      userFacingMessage: expect.stringMatching(/not currently accepting connections/),
    });
    await admin(`alter database bi_right_${suffix} allow_connections true`);
    await until(
      async () => (await cell('right', 'people', 'name', `email = 'p3@x.test'`)) === 'During the outage',
      'the edit made during the outage',
      90_000,
    );
    await until(
      async () => !(await openIssues(core.id)).some((i) => /keeps retrying/.test(i.userFacingMessage)),
      'the outage issue resolved',
    );

    // 5. The right's password changed: that connection (only) is broken, the sync paused, the user told.
    await sql('right', `alter role ${role} password 'changed-password'`);
    await sql('right', `select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'`);
    await sql('left', `update people set name = 'Needs a reconnect' where email = 'p1@x.test'`);
    await until(
      async () => (await openIssues(core.id)).some((i) => i.code === 'auth_invalid'),
      'an auth issue',
    );
    const auth = (await openIssues(core.id)).find((i) => i.code === 'auth_invalid');
    expect(auth).toMatchObject({ side: 'right', externalConnectionId: conns.right });
    const after = await api('GET', '/rest/external-connections');
    const status = Object.fromEntries(
      after.items.map((c: { id: string; status: string }) => [c.id, c.status]),
    );
    expect(status[conns.right]).toBe('broken');
    expect(status[conns.left]).not.toBe('broken');
    expect((await api('GET', `/rest/core-bases/${core.id}`)).syncState).toBe('off');
    // Nothing was lost on the left meanwhile.
    expect(await cell('left', 'people', 'name', `email = 'p1@x.test'`)).toBe('Needs a reconnect');
  }, 180_000);
});
