import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query } from '../../test/pg-pair';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Linked records between two real PostgreSQL databases through the real queue: a foreign key on one
// side arrives as the foreign key to the partner record on the other (ids differ: serial numbers on
// the left, uuids on the right), including links to records synced later in the same run.
let t: TestApp;
let api: Api;
let auth: Record<string, string>;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

beforeAll(async () => {
  t = await createTestApp();
  auth = (await signUp(t.app, 'relations@test.test')).auth;
  api = apiAs(t.app, auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `rel_${side}_${suffix}`);
    urls[side] = databaseUrl(`rel_${side}_${suffix}`);
  }
  await sql(
    'left',
    `create table companies (id serial primary key, name text not null unique, parent_id int references companies(id));
     create table contacts (id serial primary key, email text not null unique, name text, company_id int references companies(id))`,
  );
  await sql(
    'right',
    `create table organisations (id uuid primary key default gen_random_uuid(), title text not null, parent uuid references organisations(id));
     create table members (id bigserial primary key, email text not null, full_name text, org uuid references organisations(id))`,
  );
  // Parents point at companies created after them (higher ids): their links wait within the run.
  await sql(
    'left',
    `insert into companies (name) select 'Company ' || g from generate_series(1, 40) g;
     update companies set parent_id = id + 20 where id <= 20;
     insert into contacts (email, name, company_id)
       select 'p' || g || '@example.com', 'Person ' || g, 1 + (g % 40) from generate_series(1, 300) g`,
  );
});
afterAll(async () => t.close());

/** Each right member's organisation title next to what its left contact's company is called. */
async function linksAgree() {
  const left = await sql(
    'left',
    'select c.email, co.name as company from contacts c left join companies co on co.id = c.company_id',
  );
  const right = await sql(
    'right',
    'select m.email, o.title as company from members m left join organisations o on o.id = m.org',
  );
  const byEmail = new Map(right.map((r) => [r.email, r.company]));
  return left.length === right.length && left.every((l) => byEmail.get(l.email) === l.company);
}

describe('PostgreSQL <-> PostgreSQL: a relation follows its link', () => {
  it('writes foreign keys through the links of the linked tables, both ways', async () => {
    const core = await api('POST', '/rest/core-bases', { name: 'Relations' });
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
    const table = (s: 'leftExternalBase' | 'rightExternalBase', name: string) =>
      full[s].externalTables.find((x: { name: string }) => x.name === name);
    const col = (s: 'leftExternalBase' | 'rightExternalBase', tableName: string, name: string) =>
      table(s, tableName).externalColumns.find((c: { name: string }) => c.name === name);
    // Foreign keys to a primary key are discovered as linked-record fields.
    expect(col('leftExternalBase', 'contacts', 'company_id').fieldType).toBe('relations');
    expect(col('rightExternalBase', 'members', 'org').fieldType).toBe('relations');

    // The field mapper pairs the two foreign keys once their tables are mapped to each other.
    const companies = {
      leftTableId: table('leftExternalBase', 'companies').id,
      rightTableId: table('rightExternalBase', 'organisations').id,
    };
    const people = {
      leftTableId: table('leftExternalBase', 'contacts').id,
      rightTableId: table('rightExternalBase', 'members').id,
    };
    const proposed = await api('POST', `/rest/ai-field-mapper/${core.id}/automap`, {
      ...people,
      plannedTablePairs: [companies, people],
    });
    expect(proposed.proposals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          leftColumnId: col('leftExternalBase', 'contacts', 'company_id').id,
          rightColumnId: col('rightExternalBase', 'members', 'org').id,
        }),
      ]),
    );

    const pair = (l: string, lc: string, r: string, rc: string) => ({
      leftColumnId: col('leftExternalBase', l, lc).id,
      rightColumnId: col('rightExternalBase', r, rc).id,
    });
    // Linked-record fields whose linked tables are not mapped to each other are refused, with why.
    const alone = await t.app.inject({
      method: 'PATCH',
      url: `/rest/core-bases/${core.id}`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: {
        mappings: {
          tableMappings: [{ ...people, columnMappings: [pair('contacts', 'company_id', 'members', 'org')] }],
        },
      },
    });
    expect(alone.statusCode).toBe(400);
    expect(alone.json().response.userFacingMessage).toEqual([
      expect.stringContaining('map those two tables to each other'),
    ]);

    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          // Contacts first on purpose: the runtime syncs linked tables first whatever the order.
          {
            ...people,
            matchOnFieldId: col('leftExternalBase', 'contacts', 'email').id,
            columnMappings: [
              pair('contacts', 'email', 'members', 'email'),
              pair('contacts', 'name', 'members', 'full_name'),
              pair('contacts', 'company_id', 'members', 'org'),
            ],
          },
          {
            ...companies,
            matchOnFieldId: col('leftExternalBase', 'companies', 'name').id,
            columnMappings: [
              pair('companies', 'name', 'organisations', 'title'),
              pair('companies', 'parent_id', 'organisations', 'parent'),
            ],
          },
        ],
      },
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });

    // First sync: every member points at the organisation of its contact's company.
    await settleSync(t.ctx.db, core.id, linksAgree, 60_000);
    // Parents linked to organisations created later in the same run arrive too.
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (
          await sql(
            'right',
            `select count(*)::int as n from organisations o join organisations p on p.id = o.parent
              where substring(o.title from 9)::int + 20 = substring(p.title from 9)::int`,
          )
        )[0]?.n === 20,
      30_000,
    );

    // A contact moves to another company on the left: the member follows on the right.
    await sql(
      'left',
      `update contacts set company_id = (select id from companies where name = 'Company 7') where email = 'p1@example.com'`,
    );
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (
          await sql(
            'right',
            `select o.title from members m join organisations o on o.id = m.org where m.email = 'p1@example.com'`,
          )
        )[0]?.title === 'Company 7',
      30_000,
    );

    // The right moves a member to another organisation: the contact follows on the left.
    await sql(
      'right',
      `update members set org = (select id from organisations where title = 'Company 9') where email = 'p2@example.com'`,
    );
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (
          await sql(
            'left',
            `select co.name from contacts c join companies co on co.id = c.company_id where c.email = 'p2@example.com'`,
          )
        )[0]?.name === 'Company 9',
      30_000,
    );

    // A new company and a contact in it, in one transaction: both arrive, linked to each other.
    await sql(
      'left',
      `with c as (insert into companies (name) values ('Company New') returning id)
       insert into contacts (email, name, company_id) select 'new@example.com', 'Newcomer', id from c`,
    );
    // An unlinked contact (no company) stays unlinked; a cleared link clears on the other side.
    await sql('left', `update contacts set company_id = null where email = 'p3@example.com'`);
    await settleSync(t.ctx.db, core.id, linksAgree, 30_000);
    const [newcomer] = await sql(
      'right',
      `select o.title from members m join organisations o on o.id = m.org where m.email = 'new@example.com'`,
    );
    expect(newcomer?.title).toBe('Company New');
    expect((await sql('right', `select org from members where email = 'p3@example.com'`))[0]?.org).toBeNull();

    // Nothing is left waiting, no issue is open, and nothing was duplicated.
    expect(
      await t.ctx.db
        .selectFrom('pending_relation')
        .select('id')
        .where('core_base_id', '=', core.id)
        .execute(),
    ).toEqual([]);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.total).toBe(0);
    expect((await sql('right', 'select count(*)::int as n from organisations'))[0]?.n).toBe(41);
    expect((await sql('right', 'select count(*)::int as n from members'))[0]?.n).toBe(301);
  }, 180_000);
});
