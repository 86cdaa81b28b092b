import { randomBytes } from 'node:crypto';
import { startWebflowSimulator, type WebflowSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { webflowRuntimeFactory } from './runtime-connectors';

// Webflow (the simulator, as LOCKSTEP_WEBFLOW_API_URL) <-> PostgreSQL, set up over REST as a user
// would with a site token, and run by the real job queue. Webflow's changes are picked up by
// sync-now (no webhooks yet): each run reads the collection in a full pass compared with the last.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: WebflowSimulator;
let pgUrl = '';
let contactsId = '';
const json = { 'content-type': 'application/json' };

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  // Webflow's 60 requests a minute per key are not what this test is about (the connector paces
  // itself by them in production); its 429s are, and come from injected faults.
  sim = await startWebflowSimulator({
    idSeed: 21,
    seed: { companies: 3, contacts: 20, deals: 0 },
    rateLimit: false,
  });
  contactsId = sim.crm?.collections.contacts as string;
  t = await createTestApp({ LOCKSTEP_WEBFLOW_API_URL: sim.url });
  // The real runtime factory; Webflow's 429 says Retry-After: 60, slept through here in 200 ms.
  t.ctx.runtimeConnectors.register(
    'webflow',
    webflowRuntimeFactory({
      apiUrl: sim.url,
      pool: t.ctx.pool,
      client: { perMinute: 0, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200))) },
    }),
  );
  user = await signUp(t.app, 'webflow-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `wf_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, name text not null, job_title text, newsletter boolean not null default false)`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Contact = {
  id: string;
  name?: string;
  slug?: string;
  email?: string;
  jobTitle?: string;
  newsletter?: boolean;
};

/** The contacts as Webflow holds them (staged values). */
function contacts(): Contact[] {
  return [...(sim.state.items.get(contactsId)?.values() ?? [])].map((i) => ({
    id: i.id,
    name: i.fieldData.name as string | undefined,
    slug: i.fieldData.slug as string | undefined,
    email: i.fieldData.email as string | undefined,
    jobTitle: i.fieldData['job-title'] as string | undefined,
    newsletter: i.fieldData.newsletter as boolean | undefined,
  }));
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Webflow <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'webflow',
      connectionItems: { apiToken: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(sim.siteId);
    const seeded = contacts();
    expect(seeded).toHaveLength(20);
    const [first, second, third] = seeded as [Contact, Contact, Contact];
    // PostgreSQL already knows two of the contacts (other names) and one person Webflow does not.
    await sql(
      `insert into people (email, name, job_title) values ($1, 'Old Name 1', 'Intern'), ($2, 'Old Name 2', null), ('new.person@example.com', 'New Person', 'Founder')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Webflow contacts <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'webflow',
      name: 'Webflow',
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
    type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Contacts') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'people') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const pairs = [
      ['Email', 'email'],
      ['Name', 'name'],
      ['Job Title', 'job_title'],
      ['Newsletter', 'newsletter'],
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

    // First sync: matched on email (Webflow, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 21);
    expect(contacts()).toHaveLength(21);
    const people = await sql('select email, name, job_title, newsletter from people order by id');
    expect(people.find((p) => p.email === first.email)).toMatchObject({
      name: first.name,
      job_title: first.jobTitle ?? null,
    });
    expect(people.find((p) => p.email === third.email)).toMatchObject({ name: third.name });
    // Made in Webflow from PostgreSQL: a slug from the name, staged (not published).
    const created = contacts().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ name: 'New Person', slug: 'new-person', jobTitle: 'Founder' });
    expect(sim.state.items.get(contactsId)?.get(created?.id as string)?.lastPublished).toBeNull();

    // An edit in Webflow reaches PostgreSQL.
    sim.update(contactsId, third.id, { name: 'Edited in Webflow', newsletter: true });
    await syncNow(core.id, async () => {
      const [row] = await sql('select name, newsletter from people where email = $1', [third.email]);
      return row?.name === 'Edited in Webflow' && row.newsletter === true;
    });

    // An edit in PostgreSQL reaches Webflow.
    await sql(`update people set job_title = 'Edited in PostgreSQL' where email = $1`, [second.email]);
    await syncNow(
      core.id,
      () => contacts().find((x) => x.id === second.id)?.jobTitle === 'Edited in PostgreSQL',
    );

    // A conflict (both sides changed the same field) follows the winner side, Webflow: the update
    // is checked against a read right before it is written, and refused if Webflow changed it.
    sim.update(contactsId, first.id, { name: 'Webflow wins' });
    await sql(`update people set name = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select name from people where email = $1', [first.email]);
      return row?.name === 'Webflow wins';
    });
    expect(contacts().find((x) => x.id === first.id)?.name).toBe('Webflow wins');

    // Deletes: in Webflow (found absent in a pass, confirmed by id) and in PostgreSQL.
    const gone = seeded[10] as Contact;
    sim.remove(contactsId, gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as Contact).email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.email) && !contacts().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 19 }]);
    expect(contacts()).toHaveLength(19);

    // A 429 storm in the middle of the writes: Webflow answers POSTs with 429 more often than the
    // client retries, the run fails over to the queue's retry, and nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    expect(before).toBe(0);
    await sql(
      `insert into people (email, name, job_title) select 'storm' || g || '@example.com', 'Storm ' || g, 'Lead' from generate_series(1, 15) g`,
    );
    sim.update(contactsId, (seeded[5] as Contact).id, { 'job-title': 'During the storm' });
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'POST' });
    await syncNow(core.id, async () => {
      const all = contacts();
      const [row] = await sql('select job_title from people where email = $1', [seeded[5]?.email]);
      return (
        all.filter((c) => c.email?.startsWith('storm')).length >= 15 && row?.job_title === 'During the storm'
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
    expect(emails).toHaveLength(34);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 34 }]);
    const [stormRow] = await sql('select job_title from people where email = $1', [seeded[5]?.email]);
    expect(stormRow?.job_title).toBe('During the storm');

    // A quiet run afterwards changes nothing: no echo, no duplicate; both sides hold the same.
    await syncNow(core.id, () => true);
    expect(contacts()).toHaveLength(34);
    const byEmail = (a: { email?: unknown }, b: { email?: unknown }) =>
      String(a.email) < String(b.email) ? -1 : String(a.email) > String(b.email) ? 1 : 0;
    const rows = (await sql('select email, name, job_title, newsletter from people')).sort(byEmail);
    const wf = contacts()
      .map((c) => ({
        email: c.email,
        name: c.name,
        job_title: c.jobTitle ?? null,
        newsletter: c.newsletter ?? false,
      }))
      .sort(byEmail);
    expect(rows).toEqual(wf);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);

    // Publishing the site over REST: only the owner, and Webflow's one a minute is said plainly.
    const webflowBase = full.leftExternalBase as { id: string };
    const published = await api('POST', `/rest/connector/webflow/publishSite/${webflowBase.id}`, {});
    expect(published).toMatchObject({ kind: 'webflow_publish_site', status: 'COMPLETED' });
    expect(sim.state.items.get(contactsId)?.get(created?.id as string)?.lastPublished).not.toBeNull();
    const again = await t.app.inject({
      method: 'POST',
      url: `/rest/connector/webflow/publishSite/${webflowBase.id}`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(again.statusCode).toBe(429);
    expect(again.json().response.userFacingMessage).toMatch(/once a minute\. Try again in \d+ seconds/);
    const other = await signUp(t.app, 'webflow-other@test.test');
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/rest/connector/webflow/publishSite/${webflowBase.id}`,
      headers: { ...other.auth, ...json },
      payload: {},
    });
    expect(foreign.statusCode).toBe(404);
  }, 240_000);
});
