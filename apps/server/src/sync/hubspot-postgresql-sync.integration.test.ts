import { randomBytes } from 'node:crypto';
import { type HubSpotSimulator, startHubSpotSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { hubspotRuntimeFactory } from './runtime-connectors';

// HubSpot (the simulator, as LOCKSTEP_HUBSPOT_API_URL) <-> PostgreSQL, set up over REST as a user
// would with a private app token, and run by the real job queue. HubSpot's changes are picked up by
// sync-now (no webhooks yet).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: HubSpotSimulator;
let pgUrl = '';
// The simulator's search index lags writes by this much (HubSpot's by seconds).
const LAG_MS = 400;

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  sim = await startHubSpotSimulator({ idSeed: 11, searchLagMs: LAG_MS });
  t = await createTestApp({ LOCKSTEP_HUBSPOT_API_URL: sim.url });
  // The real runtime factory, with a short wait after a 429 (HubSpot's window is 10 s) to keep the test fast.
  t.ctx.runtimeConnectors.register(
    'hubspot',
    hubspotRuntimeFactory({ apiUrl: sim.url, pool: t.ctx.pool, client: { rateLimitWaitMs: 250 } }),
  );
  user = await signUp(t.app, 'hubspot-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `hs_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, first_name text, last_name text, stage text)`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Contact = { id: string; email?: string; firstname?: string; lastname?: string; lifecyclestage?: string };

/** The live (not archived) contacts as HubSpot holds them. */
function contacts(): Contact[] {
  return sim.state
    .list('contacts')
    .filter((o) => !o.archived)
    .map((o) => ({
      id: o.id,
      email: o.properties.get('email'),
      firstname: o.properties.get('firstname'),
      lastname: o.properties.get('lastname'),
      lifecyclestage: o.properties.get('lifecyclestage'),
    }));
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

/** An edit made in HubSpot is searchable once the index caught up: wait that out, then sync now. */
async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await new Promise((r) => setTimeout(r, LAG_MS + 100));
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('HubSpot <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'hubspot',
      connectionItems: { accessToken: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(String(sim.state.portalId));
    const seeded = contacts();
    expect(seeded).toHaveLength(50);
    const [first, second, third] = seeded as [Contact, Contact, Contact];
    // PostgreSQL already knows two of the contacts (other names) and one person HubSpot does not.
    await sql(
      `insert into people (email, first_name, last_name, stage) values ($1, 'Old', 'Name 1', 'lead'), ($2, 'Old', 'Name 2', null), ('new.person@example.com', 'New', 'Person', 'opportunity')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'HubSpot contacts <-> people' });
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
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Contacts') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'people') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const pairs = [
      ['Email', 'email'],
      ['First Name', 'first_name'],
      ['Last Name', 'last_name'],
      ['Lifecycle Stage', 'stage'],
    ] as const;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email'),
            columnMappings: pairs.map(([l, r]) => ({ leftColumnId: col(lt, l), rightColumnId: col(rt, r) })),
          },
        ],
      },
    });

    // First sync: matched on email (HubSpot, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 51);
    expect(contacts()).toHaveLength(51);
    const people = await sql('select email, first_name, last_name, stage from people order by id');
    expect(people.find((p) => p.email === first.email)).toMatchObject({
      first_name: first.firstname,
      last_name: first.lastname,
      stage: first.lifecyclestage ?? null,
    });
    expect(people.find((p) => p.email === third.email)).toMatchObject({ first_name: third.firstname });
    const created = contacts().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ firstname: 'New', lastname: 'Person', lifecyclestage: 'opportunity' });

    // An edit in HubSpot reaches PostgreSQL (incremental search after the index lag).
    sim.mutate('contacts', third.id, { firstname: 'Edited in HubSpot' });
    await syncNow(core.id, async () => {
      const [row] = await sql('select first_name from people where email = $1', [third.email]);
      return row?.first_name === 'Edited in HubSpot';
    });

    // An edit in PostgreSQL reaches HubSpot.
    await sql(`update people set last_name = 'Edited in PostgreSQL', stage = 'customer' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const c = contacts().find((x) => x.id === second.id);
      return c?.lastname === 'Edited in PostgreSQL' && c.lifecyclestage === 'customer';
    });

    // A conflict (both sides changed the same field) follows the winner side, HubSpot. The PostgreSQL
    // edit wakes a run at once, while HubSpot's search may not show its edit yet: the update is
    // checked against a read by id right before it is written, and refused as stale.
    sim.mutate('contacts', first.id, { firstname: 'HubSpot wins' });
    await sql(`update people set first_name = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select first_name from people where email = $1', [first.email]);
      return row?.first_name === 'HubSpot wins';
    });
    expect(contacts().find((x) => x.id === first.id)?.firstname).toBe('HubSpot wins');

    // Deletes: archived in HubSpot (found in the archived listing) and deleted in PostgreSQL.
    const gone = seeded[10] as Contact;
    sim.archive('contacts', gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as Contact).email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.email) && !contacts().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 49 }]);
    expect(contacts()).toHaveLength(49);

    // A 429 storm in the middle of the writes: HubSpot answers POSTs with 429 more often than the
    // client retries, the run fails over to the queue's retry, and nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under HubSpot's 100 requests per 10 s.
    expect(before).toBe(0);
    await sql(
      `insert into people (email, first_name, last_name, stage) select 'storm' || g || '@example.com', 'Storm', 'No ' || g, 'lead' from generate_series(1, 15) g`,
    );
    sim.mutate('contacts', (seeded[20] as Contact).id, { lastname: 'During the storm' });
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'POST' });
    await syncNow(core.id, async () => {
      const all = contacts();
      const [row] = await sql('select last_name from people where email = $1', [seeded[20]?.email]);
      return (
        all.filter((c) => c.email?.startsWith('storm')).length >= 15 && row?.last_name === 'During the storm'
      );
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => contacts().filter((c) => c.email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = contacts().filter((c) => c.email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    const emails = contacts().map((c) => c.email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    const [stormRow] = await sql('select last_name from people where email = $1', [seeded[20]?.email]);
    expect(stormRow?.last_name).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(contacts()).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 240_000);
});
