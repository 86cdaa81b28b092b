import { randomBytes } from 'node:crypto';
import { type HubSpotSimulator, startHubSpotSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { hubspotRuntimeFactory } from './runtime-connectors';

// HubSpot associations <-> a PostgreSQL foreign key, through the real runtime and queue: HubSpot's
// companies and contacts sync with `orgs` and `people`, and a contact's Companies (its association
// with a company) with `people.company_id` (a foreign key to `orgs`). An association changes no
// modified time in HubSpot, so HubSpot's side of it arrives with the connector's sweep (here every
// 1.5 s, or 6 s a list page, instead of 15 minutes).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: HubSpotSimulator;
let pgUrl = '';
const LAG_MS = 300;

const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  sim = await startHubSpotSimulator({ idSeed: 17, searchLagMs: LAG_MS, seed: { contacts: 20 } });
  t = await createTestApp({ LOCKSTEP_HUBSPOT_API_URL: sim.url });
  t.ctx.runtimeConnectors.register(
    'hubspot',
    hubspotRuntimeFactory({
      apiUrl: sim.url,
      pool: t.ctx.pool,
      client: { rateLimitWaitMs: 250 },
      associationSweepMs: 1_500,
    }),
  );
  user = await signUp(t.app, 'hubspot-assoc@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `hs_assoc_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table orgs (id serial primary key, name text not null unique);
     create table people (id serial primary key, email text not null unique, first_name text, company_id int references orgs(id))`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await new Promise((r) => setTimeout(r, LAG_MS + 100));
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

/** A contact's company names in HubSpot. */
const companiesOf = (contactId: string) =>
  sim.state
    .associated('contacts', contactId, 'companies')
    .map((a) => sim.state.get('companies', a.id)?.properties.get('name'));
const contactByEmail = (email: string) =>
  sim.state.list('contacts').find((o) => !o.archived && o.properties.get('email') === email);
/** A person's org name in PostgreSQL. */
async function orgOf(email: string): Promise<string | null> {
  const [row] = await sql(
    'select o.name from people p left join orgs o on o.id = p.company_id where p.email = $1',
    [email],
  );
  return (row?.name as string | null | undefined) ?? null;
}

describe('HubSpot associations <-> PostgreSQL foreign keys through the runtime', () => {
  it("a person's company reaches HubSpot as the contact's association, and an association made in HubSpot comes back", async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'hubspot',
      connectionItems: { accessToken: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'HubSpot associations' });
    await api('POST', '/rest/external-bases', {
      type: 'hubspot',
      name: 'HubSpot',
      remoteId: base?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'CRM',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: pgConn.id,
      side: 'right',
    });
    type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
    const table = (tables: Table[], name: string) => tables.find((x) => x.name === name) as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const left = full.leftExternalBase.externalTables as Table[];
    const right = full.rightExternalBase.externalTables as Table[];
    const [companies, contacts] = [table(left, 'Companies'), table(left, 'Contacts')];
    const [orgs, people] = [table(right, 'orgs'), table(right, 'people')];
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: companies.id,
            rightTableId: orgs.id,
            matchOnFieldId: col(companies, 'Company name'),
            columnMappings: [
              { leftColumnId: col(companies, 'Company name'), rightColumnId: col(orgs, 'name') },
            ],
          },
          {
            leftTableId: contacts.id,
            rightTableId: people.id,
            matchOnFieldId: col(contacts, 'Email'),
            columnMappings: [
              { leftColumnId: col(contacts, 'Email'), rightColumnId: col(people, 'email') },
              { leftColumnId: col(contacts, 'First Name'), rightColumnId: col(people, 'first_name') },
              { leftColumnId: col(contacts, 'Companies'), rightColumnId: col(people, 'company_id') },
            ],
          },
        ],
      },
    });

    // First sync: every contact's company arrives as the person's foreign key.
    sim.requestLog.reset();
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => {
      const [row] = await sql('select count(*)::int as n from people where company_id is not null');
      return row?.n === 20;
    });
    const seeded = sim.crm!.contacts.map((id) => sim.state.get('contacts', id)!);
    for (const c of seeded) expect(await orgOf(c.properties.get('email')!)).toBe(companiesOf(c.id)[0]);
    // Read in batches: the scans' list pages carry the associations, so no request per record.
    const firstSync = sim.requestLog.byPath();
    const v4 = Object.entries(firstSync)
      .filter(([path]) => path.startsWith('POST /crm/v4/'))
      .reduce((n, [, count]) => n + count, 0);
    expect(v4).toBeLessThanOrEqual(4);

    // PostgreSQL -> HubSpot: a person moves to another company; a new person comes with one.
    const moved = seeded[0]!;
    const email = moved.properties.get('email')!;
    const target = sim.state.get('companies', sim.crm!.companies[5]!)!.properties.get('name')!;
    expect(companiesOf(moved.id)).not.toEqual([target]);
    await sql(`update people set company_id = (select id from orgs where name = $1) where email = $2`, [
      target,
      email,
    ]);
    await sql(
      `insert into people (email, first_name, company_id) values ('new.hire@example.com', 'New', (select id from orgs where name = $1))`,
      [target],
    );
    await syncNow(core.id, () => {
      const hire = contactByEmail('new.hire@example.com');
      return companiesOf(moved.id).join() === target && !!hire && companiesOf(hire.id).join() === target;
    });
    expect(companiesOf(moved.id)).toEqual([target]);

    // HubSpot -> PostgreSQL: an association made in HubSpot (no modified time moves) arrives with
    // the sweep; one removed clears the foreign key.
    const other = seeded[1]!;
    const otherEmail = other.properties.get('email')!;
    const [had] = sim.state.associated('contacts', other.id, 'companies');
    const next = sim.crm!.companies.find((id) => id !== had?.id && id !== sim.crm!.companies[5])!;
    sim.unassociate('contacts', other.id, 'companies', had!.id);
    sim.associate('contacts', other.id, 'companies', next);
    const nextName = sim.state.get('companies', next)!.properties.get('name')!;
    const third = seeded[2]!;
    for (const a of sim.state.associated('contacts', third.id, 'companies'))
      sim.unassociate('contacts', third.id, 'companies', a.id);
    // A sweep is due once a read begins a while (at least 6 s a list page, 1.5 s here) after the
    // last one: runs go on until one sweeps.
    const arrived = async () =>
      (await orgOf(otherEmail)) === nextName && (await orgOf(third.properties.get('email')!)) === null;
    for (let run = 0; run < 12 && !(await arrived()); run++) {
      await new Promise((r) => setTimeout(r, 1_500));
      await syncNow(core.id, () => true);
    }
    expect(await orgOf(otherEmail)).toBe(nextName);

    // A quiet run afterwards writes nothing back: no echo of the associations.
    const before = sim.requestLog.count({
      method: 'POST',
      path: '/crm/v4/associations/contacts/companies/batch/associate/default',
    });
    await syncNow(core.id, () => true);
    expect(
      sim.requestLog.count({
        method: 'POST',
        path: '/crm/v4/associations/contacts/companies/batch/associate/default',
      }),
    ).toBe(before);
    expect(companiesOf(other.id)).toEqual([nextName]);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    expect((await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed')).toEqual([]);
  }, 180_000);
});
