import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// A real two-way sync between two PostgreSQL databases, set up entirely over REST as a user would:
// connections, attached schemas, mappings matched on email, switched on; the real job queue runs it.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const clients: pg.Client[] = [];

function urlOf(database: string) {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${database}`;
  return u.toString();
}

async function sql(side: 'left' | 'right', text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: urls[side] });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'pg-sync@test.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, ...json },
    payload: { productType: 'pro' },
  });
});
let attempt = 0;
/**
 * Fresh databases for each attempt of the test (vitest retries it once): a retry must not meet the
 * rows, and the still running sync, of the attempt before it.
 */
async function freshDatabases() {
  attempt += 1;
  for (const side of ['left', 'right'] as const) {
    const name = `pg_${side}_${suffix}_${attempt}`;
    await ensureDatabase(inject('adminDatabaseUrl'), name);
    urls[side] = urlOf(name);
  }
  await sql(
    'left',
    `create table contacts (id serial primary key, email text not null unique, full_name text, score numeric(10,2), active boolean not null default false, tags text[] not null default '{}', created_at timestamptz not null default now())`,
  );
  await sql(
    'right',
    `create table subscribers (id uuid primary key default gen_random_uuid(), email text not null, name text check (length(name) < 30), points numeric, enabled boolean, labels text[])`,
  );
  await sql(
    'left',
    `insert into contacts (email, full_name, score, active, tags) values
    ('ada@example.com', 'Ada Lovelace', 12.50, true, '{math}'),
    ('grace@example.com', 'Grace Hopper', 99.99, false, '{}'),
    ('alan@example.com', 'Alan Turing', 7, true, '{code,math}')`,
  );
  await sql(
    'right',
    `insert into subscribers (email, name, points, enabled, labels) values
    (' ADA@example.com', 'Ada', 1, false, null),
    ('linus@example.com', 'Linus', 3.25, true, '{kernel}')`,
  );
}

afterAll(async () => {
  for (const c of clients) await c.end();
  await t.close();
});

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

/** Real time races the run counter (a NOTIFY run may come before sync-now's): wait for the data. */
async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

async function waitForRuns(coreBaseId: string, n: number) {
  for (let i = 0; i < 300; i++) {
    const rows = await t.ctx.db
      .selectFrom('sync_log')
      .select(['status', 'error'])
      .where('core_base_id', '=', coreBaseId)
      .where('status', 'in', ['done', 'failed'])
      .execute();
    if (rows.length >= n) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('runs did not finish');
}

describe('PostgreSQL <-> PostgreSQL through the runtime', () => {
  it('sets up over REST, runs the first sync matched on email, then carries edits, deletes and refusals', async () => {
    await freshDatabases();
    const info = await api('GET', '/rest/connector-info');
    expect(info.find((c: { connectorType: string }) => c.connectorType === 'postgresql')).toMatchObject({
      available: true,
    });

    // Wrong password: a clear refusal, nothing stored.
    const bad = new URL(urls.left);
    bad.password = 'wrong';
    const refused = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, ...json },
      payload: { type: 'postgresql', connectionItems: { connectionString: bad.toString() } },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response.userFacingMessage).toBe('PostgreSQL refused the user name or password.');

    const left = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: urls.left },
    });
    const right = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: urls.right },
    });
    expect(left.connectionItems).toEqual({}); // the connection string is a secret: never returned
    const schemas = await api('PATCH', `/rest/external-connections/${left.id}/fetch-base-previews`, {});
    expect(schemas.basePreviews.map((b: { name: string }) => b.name)).toContain('public');

    const core = await api('POST', '/rest/core-bases', { name: 'CRM <-> Newsletter' });
    await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'CRM',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: left.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Newsletter',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: right.id,
      side: 'right',
    });
    const lt = full.leftExternalBase.externalTables.find((x: { name: string }) => x.name === 'contacts');
    const rt = full.rightExternalBase.externalTables.find((x: { name: string }) => x.name === 'subscribers');
    const col = (
      tbl: { externalColumns: { name: string; id: string; fieldType: string }[] },
      name: string,
    ) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name}`);
      return c;
    };
    expect(col(lt, 'score').fieldType).toBe('number');
    expect(col(lt, 'tags').fieldType).toBe('multi_select');
    expect(col(lt, 'created_at').fieldType).toBe('datetime');
    const pairs = [
      ['email', 'email'],
      ['full_name', 'name'],
      ['score', 'points'],
      ['active', 'enabled'],
      ['tags', 'labels'],
    ];
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'email').id,
            columnMappings: pairs.map(([l, r]) => ({
              leftColumnId: col(lt, l as string).id,
              rightColumnId: col(rt, r as string).id,
            })),
          },
        ],
      },
    });

    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    const first = await waitForRuns(core.id, 1);
    expect(first[0]).toMatchObject({ status: 'done', error: null });

    const leftRows = await sql(
      'left',
      'select email, full_name, score::text, active, tags from contacts order by email',
    );
    const rightRows = await sql(
      'right',
      'select email, name, points::text, enabled, labels from subscribers order by trim(lower(email))',
    );
    expect(leftRows.map((r) => r.email)).toEqual([
      'ada@example.com',
      'alan@example.com',
      'grace@example.com',
      'linus@example.com',
    ]);
    expect(rightRows).toHaveLength(4);
    // The matched pair took the left (winner) values; the created rows carry exact numbers and lists.
    expect(rightRows.find((r) => r.name === 'Ada Lovelace')).toMatchObject({
      points: '12.5',
      enabled: true,
      labels: ['math'],
    });
    expect(rightRows.find((r) => r.email === 'alan@example.com')).toMatchObject({
      points: '7',
      labels: ['code', 'math'],
    });
    expect(leftRows.find((r) => r.email === 'linus@example.com')).toMatchObject({
      full_name: 'Linus',
      score: '3.25',
      active: true,
      tags: ['kernel'],
    });

    // An edit on the left reaches the right through change capture.
    await sql('left', `update contacts set full_name = 'Grace B. Hopper' where email = 'grace@example.com'`);
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await until(
      async () =>
        (await sql('right', `select name from subscribers where email = 'grace@example.com'`))[0]?.name ===
        'Grace B. Hopper',
      'the edit arrives',
    );
    expect(
      (await sql('right', `select name from subscribers where email = 'grace@example.com'`))[0]?.name,
    ).toBe('Grace B. Hopper');

    // A delete on the right reaches the left.
    await sql('right', `delete from subscribers where email = 'alan@example.com'`);
    await until(
      async () =>
        (await sql('left', `select id from contacts where email = 'alan@example.com'`)).length === 0,
      'the delete arrives',
    );
    expect(await sql('left', `select id from contacts where email = 'alan@example.com'`)).toEqual([]);

    // A value the right refuses becomes an issue on that record; the rest goes on.
    await sql(
      'left',
      `update contacts set full_name = 'A name far too long for the newsletter', score = 13 where email = 'ada@example.com'`,
    );
    await sql('left', `update contacts set score = 100 where email = 'grace@example.com'`);
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await until(
      async () =>
        (await sql('right', `select points::text from subscribers where email = 'grace@example.com'`))[0]
          ?.points === '100',
      'the other edit arrives',
    );
    // The refusal is recorded with the batch's bookkeeping, just after the target took the other edit.
    const issuesUrl = `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`;
    await until(async () => (await api('GET', issuesUrl)).items.length > 0, 'the refusal is an issue');
    const issues = await api('GET', issuesUrl);
    expect(issues.items).toEqual([
      expect.objectContaining({ code: 'validation', side: 'right', status: 'open' }),
    ]);
    expect(issues.items[0].userFacingMessage).toMatch(/refused the value/);
    expect(
      (await sql('right', `select points::text from subscribers where email = 'grace@example.com'`))[0]
        ?.points,
    ).toBe('100');
  });
});
