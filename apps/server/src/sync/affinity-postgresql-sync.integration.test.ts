import { randomBytes } from 'node:crypto';
import { type AffinitySimulator, startAffinitySimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Affinity (the simulator, as LOCKSTEP_AFFINITY_API_URL) <-> PostgreSQL, set up over REST as a user
// would with an API key, and run by the real job queue with the server's own Affinity wiring.
// Affinity has no modified-since filter: its changes are found by the connector's pass compared
// with the last read, at each sync-now (webhooks, tested apart, only wake such a pass).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: AffinitySimulator;
let pgUrl = '';
let jobTitleField = 0;

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  sim = await startAffinitySimulator({ idSeed: 11 });
  jobTitleField = sim.seed?.fields.jobTitle as number;
  t = await createTestApp({ LOCKSTEP_AFFINITY_API_URL: sim.url });
  user = await signUp(t.app, 'affinity-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `affinity_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, first_name text, last_name text, job_title text)`,
  );
  // For the links test (made here: the server keeps the database's schema it discovered first).
  await sql(
    `create table orgs (id serial primary key, name text not null unique);
     create table contacts (id serial primary key, email text not null unique, first_name text, org_id int references orgs(id))`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Person = {
  id: number;
  email?: string;
  first?: string;
  last?: string | null;
  job?: string;
  emails: string[];
};

/** The persons as Affinity holds them, with their Job Title. */
function people(): Person[] {
  return [...sim.state.persons.values()].map((p) => ({
    id: p.id,
    email: p.emails[0],
    emails: [...p.emails],
    first: p.firstName,
    last: p.lastName,
    job: sim.state.cellValues(jobTitleField, p.id, null)[0]?.value as string | undefined,
  }));
}
const setJob = (id: number, value: string) => {
  const [fv] = sim.state.cellValues(jobTitleField, id, null);
  if (fv) sim.update('fieldValue', fv.id, { value });
  else sim.create('fieldValue', { field_id: jobTitleField, entity_id: id, value });
};

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Affinity <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'affinity',
      connectionItems: { apiKey: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(String(sim.state.tenant.id));
    const seeded = people();
    // 30 people and the account's 2 users (internal persons).
    expect(seeded).toHaveLength(32);
    const ids = sim.seed?.persons as number[];
    const byId = (id: number) => seeded.find((p) => p.id === id) as Person;
    const [first, second, third] = ids.map(byId) as [Person, Person, Person];
    // PostgreSQL already knows two of the people (other names) and one person Affinity does not.
    await sql(
      `insert into people (email, first_name, last_name, job_title) values ($1, 'Old', 'Name 1', 'Intern'), ($2, 'Old', 'Name 2', null), ('new.person@example.com', 'New', 'Person', 'Founder')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Affinity people <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'affinity',
      name: 'Affinity',
      remoteId: base?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'People',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: pgConn.id,
      side: 'right',
    });
    type Table = {
      id: string;
      name: string;
      externalColumns: { id: string; name: string; remoteId?: string; readOnly?: boolean }[];
    };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'People') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'people') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const pairs = [
      ['Primary email', 'email'],
      ['First name', 'first_name'],
      ['Last name', 'last_name'],
      ['Job Title', 'job_title'],
    ] as const;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Primary email'),
            columnMappings: pairs.map(([l, r]) => ({ leftColumnId: col(lt, l), rightColumnId: col(rt, r) })),
          },
        ],
      },
    });

    // First sync: matched on email (Affinity, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 33);
    expect(people()).toHaveLength(33);
    const rows = await sql('select email, first_name, last_name, job_title from people order by id');
    expect(rows.find((p) => p.email === first.email)).toMatchObject({
      first_name: first.first,
      last_name: first.last,
      job_title: first.job ?? null,
    });
    expect(rows.find((p) => p.email === third.email)).toMatchObject({ first_name: third.first });
    const created = people().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ first: 'New', last: 'Person', job: 'Founder' });

    // An edit in Affinity (a field value) reaches PostgreSQL (found by the pass compared with the last read).
    setJob(third.id, 'Edited in Affinity');
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from people where email = $1', [third.email]);
      return row?.job_title === 'Edited in Affinity';
    });

    // An edit in PostgreSQL reaches Affinity: a name (v1 PUT) and a field value.
    await sql(`update people set last_name = 'Edited in PostgreSQL', job_title = 'CFO' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const c = people().find((x) => x.id === second.id);
      return c?.last === 'Edited in PostgreSQL' && c.job === 'CFO' && c.first === second.first;
    });

    // A conflict (both sides changed the same field) follows the winner side, Affinity: the update is
    // checked against a read by id right before it is written, and refused if stale.
    setJob(first.id, 'Affinity wins');
    await sql(`update people set job_title = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from people where email = $1', [first.email]);
      return row?.job_title === 'Affinity wins';
    });
    expect(people().find((x) => x.id === first.id)?.job).toBe('Affinity wins');

    // Deletes: deleted in Affinity (an id the pass no longer finds, confirmed by id) and in PostgreSQL.
    const gone = byId(ids[10] as number);
    const alsoGone = byId(ids[11] as number);
    sim.remove('person', gone.id);
    await sql(`delete from people where email = $1`, [alsoGone.email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.email) && !people().some((c) => c.id === alsoGone.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 31 }]);
    expect(people()).toHaveLength(31);

    // A 429 storm in the middle of the writes: Affinity answers the person creates with 429 more
    // often than the client retries, the run fails over to the queue's retry, and nothing is lost
    // or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under Affinity's limits.
    expect(before).toBe(0);
    await sql(
      `insert into people (email, first_name, last_name, job_title) select 'storm' || g || '@example.com', 'Storm', 'No ' || g, 'Engineer' from generate_series(1, 15) g`,
    );
    const during = byId(ids[20] as number);
    setJob(during.id, 'During the storm');
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'POST', path: '/persons' });
    const stormed = () => people().filter((c) => c.email?.startsWith('storm')).length >= 15;
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from people where email = $1', [during.email]);
      return stormed() && row?.job_title === 'During the storm';
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(core.id, stormed, 30_000).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = people().filter((c) => c.email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    for (const s of storm) expect(s.job).toBe('Engineer');
    const emails = people().flatMap((c) => c.emails);
    expect(new Set(emails).size).toBe(emails.length);
    expect(people()).toHaveLength(46);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 46 }]);
    const [stormRow] = await sql('select job_title from people where email = $1', [during.email]);
    expect(stormRow?.job_title).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    const writes = sim.requestLog.count({ method: 'POST' }) + sim.requestLog.count({ method: 'PUT' });
    await syncNow(core.id, () => true);
    expect(sim.requestLog.count({ method: 'POST' }) + sim.requestLog.count({ method: 'PUT' })).toBe(writes);
    expect(people()).toHaveLength(46);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 46 }]);
    // Both sides hold the same values.
    const pgRows = await sql('select email, first_name, last_name, job_title from people order by email');
    const affinity = people().map((c) => ({
      email: c.email,
      first_name: c.first ?? null,
      last_name: c.last ?? null,
      job_title: c.job ?? null,
    }));
    const byEmail = (a: { email?: string }, b: { email?: string }) =>
      String(a.email) < String(b.email) ? -1 : 1;
    expect(pgRows.map((r) => ({ ...r })).sort(byEmail)).toEqual(affinity.sort(byEmail));
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 240_000);

  it("a person's organization travels both ways as a foreign key to the organization's partner row", async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'affinity',
      connectionItems: { apiKey: sim.token },
    });
    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Affinity links <-> contacts' });
    await api('POST', '/rest/external-bases', {
      type: 'affinity',
      name: 'Affinity',
      remoteId: String(sim.state.tenant.id),
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Contacts',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: pgConn.id,
      side: 'right',
    });
    type Column = { id: string; name: string; fieldType?: string; options?: { references?: string } };
    type Table = { id: string; name: string; externalColumns: Column[] };
    const table = (s: 'leftExternalBase' | 'rightExternalBase', name: string) =>
      (full[s].externalTables as Table[]).find((x) => x.name === name) as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c;
    };
    const [people, companies] = [table('leftExternalBase', 'People'), table('leftExternalBase', 'Companies')];
    const [contacts, orgs] = [table('rightExternalBase', 'contacts'), table('rightExternalBase', 'orgs')];
    // A person's Organizations: a linked record of Companies, as the foreign key is one of orgs.
    expect(col(people, 'Organizations')).toMatchObject({
      fieldType: 'relations',
      options: { references: 'companies' },
    });
    const pair = (l: Table, lc: string, r: Table, rc: string) => ({
      leftColumnId: col(l, lc).id,
      rightColumnId: col(r, rc).id,
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: people.id,
            rightTableId: contacts.id,
            matchOnFieldId: col(people, 'Primary email').id,
            columnMappings: [
              pair(people, 'Primary email', contacts, 'email'),
              pair(people, 'First name', contacts, 'first_name'),
              pair(people, 'Organizations', contacts, 'org_id'),
            ],
          },
          {
            leftTableId: companies.id,
            rightTableId: orgs.id,
            matchOnFieldId: col(companies, 'Name').id,
            columnMappings: [pair(companies, 'Name', orgs, 'name')],
          },
        ],
      },
    });
    /** Each contact's organization name, by email. */
    const pgOrgs = async () =>
      new Map(
        (await sql('select c.email, o.name from contacts c left join orgs o on o.id = c.org_id')).map((r) => [
          r.email as string,
          (r.name as string | null) ?? null,
        ]),
      );
    const affinityOrg = (personId: number) => {
      const [id] = sim.state.person(personId).organizationIds;
      return id === undefined ? null : sim.state.organization(id).name;
    };
    const seed = sim.seed;
    if (!seed) throw new Error('seeded');
    const [p1, p2] = seed.persons.filter((id) => sim.state.persons.has(id)) as [number, number];
    const email = (id: number) => sim.state.person(id).emails[0] as string;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => {
      const now = await pgOrgs();
      return now.size === sim.state.persons.size && now.get(email(p1)) === affinityOrg(p1);
    });
    // Every person's one organization arrived as the foreign key to that organization's row.
    const firstSync = await pgOrgs();
    for (const p of sim.state.persons.values())
      if (p.organizationIds.length <= 1)
        expect(firstSync.get(p.emails[0] as string), p.emails[0]).toBe(affinityOrg(p.id));

    // Set in PostgreSQL: the person's organizations in Affinity become that organization (v1 organization_ids).
    const other = [...sim.state.organizations.values()].find((o) => o.name !== affinityOrg(p1));
    if (!other) throw new Error('two organizations');
    await sql('update contacts set org_id = (select id from orgs where name = $2) where email = $1', [
      email(p1),
      other.name,
    ]);
    await syncNow(core.id, () => sim.state.person(p1).organizationIds.join() === String(other.id));
    expect(sim.state.organization(other.id).personIds).toContain(p1);

    // Changed in Affinity: the foreign key follows.
    const third = [...sim.state.organizations.values()].find((o) => o.name !== affinityOrg(p2));
    if (!third) throw new Error('two organizations');
    sim.update('person', p2, { organization_ids: [third.id] });
    await syncNow(core.id, async () => (await pgOrgs()).get(email(p2)) === third.name);
    expect((await pgOrgs()).get(email(p1))).toBe(other.name);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, status: 'open' }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 180_000);
});
