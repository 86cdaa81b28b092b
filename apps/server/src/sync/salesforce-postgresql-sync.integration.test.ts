import { createHash, randomBytes } from 'node:crypto';
import { type SalesforceSimulator, startSalesforceSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { salesforceRuntimeFactory } from './runtime-connectors';

// Salesforce (the simulator, as LOCKSTEP_SALESFORCE_API_URL: login host and instance) <-> PostgreSQL,
// set up over REST as a user would with a session (access token + instance URL), and run by the
// real job queue. Salesforce's changes are picked up by sync-now (SystemModstamp and the deleted
// window; no webhooks yet).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: SalesforceSimulator;
let pgUrl = '';
let afterRead: (() => void) | null = null;
const OAUTH_CLIENT = { clientId: '3MVG9LockstepTestApp', clientSecret: 'lockstep-test-secret' };
const REDIRECT_URI = 'http://localhost:3999/oauth/salesforce/callback';

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

type Contact = { id: string; Email?: string; FirstName?: string; LastName?: string; LeadSource?: string };

/** The live contacts as Salesforce holds them. */
function contacts(): Contact[] {
  return sim.state.list('Contact').map((r) => {
    const o = sim.state.image(r) as Record<string, string | undefined>;
    return {
      id: r.id,
      ...(o.Email ? { Email: o.Email } : {}),
      ...(o.FirstName ? { FirstName: o.FirstName } : {}),
      ...(o.LastName ? { LastName: o.LastName } : {}),
      ...(o.LeadSource ? { LeadSource: o.LeadSource } : {}),
    };
  });
}

beforeAll(async () => {
  sim = await startSalesforceSimulator({
    idSeed: 11,
    seed: false,
    // This server's connected app, with its callback page.
    oauth: { clients: [{ ...OAUTH_CLIENT, redirectUris: [REDIRECT_URI] }] },
  });
  for (let i = 0; i < 50; i++)
    sim.create('Contact', {
      FirstName: `First${i}`,
      LastName: `Last${i}`,
      Email: `contact${i}@example.com`,
      ...(i % 3 === 0 ? { LeadSource: 'Web' } : {}),
    });
  t = await createTestApp({
    LOCKSTEP_SALESFORCE_API_URL: sim.url,
    LOCKSTEP_SALESFORCE_CLIENT_ID: OAUTH_CLIENT.clientId,
    LOCKSTEP_SALESFORCE_CLIENT_SECRET: OAUTH_CLIENT.clientSecret,
  });
  // The real runtime factory, with a short wait after a 429 to keep the test fast. Its reads can
  // be made to end with an edit in Salesforce (`afterRead`): one that lands between Lockstep's read
  // and its write, which no read of this run can see.
  const factory = salesforceRuntimeFactory({
    apiUrl: sim.url,
    pool: t.ctx.pool,
    client: { rateLimitWaitMs: 250 },
  });
  t.ctx.runtimeConnectors.register('salesforce', (secrets, save) => {
    const c = factory(secrets, save);
    return {
      ...c,
      read: async (table, cursor, options) => {
        const page = await c.read(table, cursor, options);
        const edit = afterRead;
        if (edit && !page.hasMore) {
          afterRead = null;
          edit();
        }
        return page;
      },
    };
  });
  user = await signUp(t.app, 'salesforce-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `sf_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, first_name text, last_name text not null, source text)`,
  );
  await sql(
    `create table leads (id serial primary key, email text, last_name text not null, company text not null)`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check, timeoutMs);
}

/**
 * Salesforce reports a delete once its minute has passed (getDeleted ignores seconds): sync now
 * until the check holds.
 */
async function syncUntil(coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 150_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await syncNow(coreBaseId, check, 15_000);
    } catch (error) {
      if (Date.now() > end) throw error;
    }
  }
}

describe('Salesforce <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'salesforce',
      connectionItems: { accessToken: sim.token, instanceUrl: sim.url },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBeTruthy();
    const seeded = contacts();
    expect(seeded).toHaveLength(50);
    const [first, second, third] = seeded as [Contact, Contact, Contact];
    // PostgreSQL already knows two of the contacts (other names) and one person Salesforce does not.
    await sql(
      `insert into people (email, first_name, last_name, source) values ($1, 'Old', 'Name 1', 'Other'), ($2, 'Old', 'Name 2', null), ('new.person@example.com', 'New', 'Person', 'Partner Referral')`,
      [first.Email, second.Email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Salesforce contacts <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'salesforce',
      name: 'Salesforce',
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
      ['Lead Source', 'source'],
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

    // First sync: matched on email (Salesforce, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 51);
    expect(contacts()).toHaveLength(51);
    const people = await sql('select email, first_name, last_name, source from people order by id');
    expect(people.find((p) => p.email === first.Email)).toMatchObject({
      first_name: first.FirstName,
      last_name: first.LastName,
      source: first.LeadSource ?? null,
    });
    expect(people.find((p) => p.email === third.Email)).toMatchObject({ first_name: third.FirstName });
    const created = contacts().find((c) => c.Email === 'new.person@example.com');
    expect(created).toMatchObject({ FirstName: 'New', LastName: 'Person', LeadSource: 'Partner Referral' });

    // An edit in Salesforce reaches PostgreSQL (incremental by SystemModstamp).
    sim.update('Contact', third.id, { FirstName: 'Edited in Salesforce' });
    await syncNow(core.id, async () => {
      const [row] = await sql('select first_name from people where email = $1', [third.Email]);
      return row?.first_name === 'Edited in Salesforce';
    });

    // An edit in PostgreSQL reaches Salesforce.
    await sql(`update people set last_name = 'Edited in PostgreSQL', source = 'Other' where email = $1`, [
      second.Email,
    ]);
    await syncNow(core.id, () => {
      const c = contacts().find((x) => x.id === second.id);
      return c?.LastName === 'Edited in PostgreSQL' && c.LeadSource === 'Other';
    });

    // A conflict (both sides changed the same field) follows the winner side, Salesforce. The
    // Salesforce edit lands right after the run read Salesforce and before it writes PostgreSQL's
    // edit there: the update is checked against a read right before it is written, and refused
    // as stale (composite has no conditional update); the next run brings Salesforce's value over.
    afterRead = () => sim.update('Contact', first.id, { FirstName: 'Salesforce wins' });
    await sql(`update people set first_name = 'PostgreSQL loses' where email = $1`, [first.Email]);
    await syncUntil(core.id, async () => {
      const [row] = await sql('select first_name from people where email = $1', [first.Email]);
      return row?.first_name === 'Salesforce wins';
    });
    expect(afterRead).toBe(null);
    expect(contacts().find((x) => x.id === first.id)?.FirstName).toBe('Salesforce wins');

    // Deletes: in Salesforce (the deleted window, once its minute passed) and in PostgreSQL.
    const gone = seeded[10] as Contact;
    sim.remove('Contact', gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as Contact).Email]);
    await syncUntil(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.Email) && !contacts().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 49 }]);
    expect(contacts()).toHaveLength(49);

    // A 429 storm in the middle of the writes: Salesforce answers POSTs with 429 more often than the
    // client retries, the run fails over to the queue's retry, and nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    expect(before).toBe(0);
    await sql(
      `insert into people (email, first_name, last_name, source) select 'storm' || g || '@example.com', 'Storm', 'No ' || g, 'Web' from generate_series(1, 15) g`,
    );
    sim.update('Contact', (seeded[20] as Contact).id, { LastName: 'During the storm' });
    sim.faults.next({ status: 429, count: 7, method: 'POST' });
    await syncNow(core.id, async () => {
      const all = contacts();
      const [row] = await sql('select last_name from people where email = $1', [seeded[20]?.Email]);
      return (
        all.filter((c) => c.Email?.startsWith('storm')).length >= 15 && row?.last_name === 'During the storm'
      );
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => contacts().filter((c) => c.Email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = contacts().filter((c) => c.Email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    const emails = contacts().map((c) => c.Email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    const [stormRow] = await sql('select last_name from people where email = $1', [seeded[20]?.Email]);
    expect(stormRow?.last_name).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(contacts()).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    // Both sides hold the same people.
    const byEmail = (a: { email: unknown }, b: { email: unknown }) =>
      String(a.email) < String(b.email) ? -1 : String(a.email) > String(b.email) ? 1 : 0;
    const rows = (await sql('select email, first_name, last_name, source from people')).sort(byEmail);
    const sf = contacts()
      .map((c) => ({
        email: c.Email ?? null,
        first_name: c.FirstName ?? null,
        last_name: c.LastName ?? null,
        source: c.LeadSource ?? null,
      }))
      .sort(byEmail);
    expect(rows).toEqual(sf);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 360_000);

  it('signs in with Salesforce over REST (web-server flow with PKCE) and renews an ended session with the refresh token', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
    const { url } = await api('POST', '/rest/external-connections/oauth/salesforce/authorize-url', {
      codeChallenge,
      state: 'state-salesforce-0001',
      redirectUri: REDIRECT_URI,
    });
    expect(new URL(url).origin).toBe(new URL(sim.url).origin);
    // The person approves in Salesforce, which sends the browser back with a code.
    const consent = await fetch(url, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location') ?? '').searchParams;
    expect(back.get('state')).toBe('state-salesforce-0001');
    const conn = await api('POST', '/rest/external-connections/oauth/salesforce/authorize-callback', {
      code: back.get('code'),
      codeVerifier: verifier,
      redirectUri: REDIRECT_URI,
      connectionItems: {},
    });
    expect(conn.name).toMatch(/^Salesforce \(.+@.+\)$/);
    const bases = await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([
      { remoteId: sim.state.orgId, name: expect.stringMatching(/Salesforce/) },
    ]);
    // Every session of the org ends (as at a timeout): the next call renews it once and goes on.
    const stored = async () => {
      const row = await t.ctx.db
        .selectFrom('external_connection')
        .select('secrets')
        .where('id', '=', conn.id)
        .executeTakeFirstOrThrow();
      return t.ctx.secretBox.open<{ connectionItems: Record<string, string> }>(row.secrets).connectionItems;
    };
    const before = await stored();
    expect(before).toMatchObject({ instanceUrl: sim.url, refreshToken: expect.any(String) });
    sim.revokeToken(before.accessToken as string);
    const again = await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {});
    expect(again.basePreviews).toHaveLength(1);
    // The renewed session is kept on the connection.
    const after = await stored();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken);
  });

  it('a first sync of 5,000 rows into Salesforce goes through Bulk API 2.0 ingest jobs, not thousands of calls', async () => {
    await sql(
      `insert into leads (email, last_name, company) select 'lead' || g || '@example.com', 'Lead ' || g, 'Company ' || (g % 97) from generate_series(1, 5000) g`,
    );
    const conn = await api('POST', '/rest/external-connections', {
      type: 'salesforce',
      connectionItems: { accessToken: sim.token, instanceUrl: sim.url },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    const core = await setUpAppPostgresSync(api, {
      name: 'Salesforce leads <-> leads',
      app: {
        type: 'salesforce',
        name: 'Salesforce',
        connectionId: conn.id,
        remoteId: base?.remoteId as string,
      },
      pgUrl,
      tables: [
        {
          left: 'Leads',
          right: 'leads',
          matchOn: 'Email',
          fields: [
            ['Email', 'email'],
            ['Last Name', 'last_name'],
            ['Company', 'company'],
          ],
        },
      ],
    });
    const from = sim.requestLog.entries.length;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, () => sim.state.list('Lead').length >= 5000, 150_000);
    await settle(core.id, () => true);
    const calls = sim.requestLog.entries.slice(from);
    const ingestJobs = calls.filter((e) => e.method === 'POST' && /\/jobs\/ingest\/?$/.test(e.path));
    const collectionCreates = calls.filter(
      (e) => e.method === 'POST' && /\/composite\/sobjects\/?$/.test(e.path),
    );
    // A chunk of up to 10,000 records is one ingest job: 5,000 rows are one job, in a handful of
    // calls (create the job, upload the CSV, close it, poll it, read its results), where collection
    // calls of 200 would have taken 25.
    expect(ingestJobs).toHaveLength(1);
    expect(collectionCreates).toHaveLength(0);
    expect(calls.length).toBeLessThan(40);
    const leads = sim.state.list('Lead').map((r) => (sim.state.image(r) as { Email?: string }).Email);
    expect(new Set(leads).size).toBe(5000);
    expect(await sql('select count(*)::int as n from leads')).toEqual([{ n: 5000 }]);
    const links = await t.ctx.db
      .selectFrom('core_meta_record')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('core_base_id', '=', core.id)
      .executeTakeFirstOrThrow();
    expect(Number(links.n)).toBe(5000);
    expect((await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed')).toEqual([]);
  }, 240_000);
});
