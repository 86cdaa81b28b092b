import { randomBytes } from 'node:crypto';
import { type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { pipedriveRuntimeFactory } from './runtime-connectors';

// Pipedrive (the simulator, as LOCKSTEP_PIPEDRIVE_API_URL) <-> PostgreSQL, set up over REST as a
// user would with an API token, and run by the real job queue. Pipedrive's changes are picked up by
// sync-now (no webhooks yet). The simulator enforces Pipedrive's burst window (40 per 2 s) and
// daily token budget; the connector paces itself under them.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: PipedriveSimulator;
let pgUrl = '';

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

let attempt = 0;

/**
 * A fresh simulator, server and database for each attempt of the test (vitest retries it once): a
 * retry must not meet the persons, rows and still running sync of the attempt before it.
 */
async function setUp() {
  attempt += 1;
  await t?.close();
  await sim?.close();
  sim = await startPipedriveSimulator({});
  t = await createTestApp({ LOCKSTEP_PIPEDRIVE_API_URL: sim.url });
  // The real runtime factory, with a short wait after a 429 (Pipedrive's window is 2 s) to keep the test fast.
  t.ctx.runtimeConnectors.register(
    'pipedrive',
    pipedriveRuntimeFactory({ apiUrl: sim.url, pool: t.ctx.pool, client: { rateLimitWaitMs: 250 } }),
  );
  user = await signUp(t.app, `pipedrive-pg-${attempt}@test.test`);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `pd_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, full_name text, source text)`,
  );
}
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Person = { id: number; email?: string; name?: string; source?: string | null };

/** The live (not deleted) persons as Pipedrive holds them, the lead source by its label. */
function persons(): Person[] {
  const field = sim.crm?.fields.leadSource;
  return sim.state
    .list('persons')
    .filter((e) => !e.deleted)
    .map((e) => {
      const emails = (e.values.emails ?? []) as { value: string; primary: boolean }[];
      const option = field ? e.custom[field.key] : undefined;
      return {
        id: e.id,
        email: (emails.find((m) => m.primary) ?? emails[0])?.value,
        name: e.values.name as string | undefined,
        source: field?.options?.find((o) => o.id === option)?.label ?? null,
      };
    });
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

/** Pipedrive's update_time has whole seconds: let the edit's second pass, then sync now. */
async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await new Promise((r) => setTimeout(r, 1_100));
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Pipedrive <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    await setUp();
    const conn = await api('POST', '/rest/external-connections', {
      type: 'pipedrive',
      connectionItems: { apiToken: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(String(sim.state.companyId));
    const seeded = persons();
    expect(seeded).toHaveLength(30);
    const [first, second, third] = seeded as [Person, Person, Person];
    // PostgreSQL already knows two of the persons (other names) and one Pipedrive does not.
    await sql(
      `insert into people (email, full_name, source) values ($1, 'Old Name 1', 'Event'), ($2, 'Old Name 2', null), ('new.person@example.com', 'New Person', 'Referral')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Pipedrive persons <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'pipedrive',
      name: 'Pipedrive',
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
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Persons') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'people') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    // The custom field shows its name; its remote id is Pipedrive's 40-character hash.
    const leadSource = lt.externalColumns.find((x) => x.name === 'Lead source');
    expect(leadSource?.remoteId).toMatch(/^[0-9a-f]{40}$/);
    const pairs = [
      ['Email', 'email'],
      ['Name', 'full_name'],
      ['Lead source', 'source'],
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

    // First sync: matched on email (Pipedrive, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 31);
    expect(persons()).toHaveLength(31);
    const people = await sql('select email, full_name, source from people order by id');
    expect(people.find((p) => p.email === first.email)).toMatchObject({
      full_name: first.name,
      source: first.source ?? null,
    });
    expect(people.find((p) => p.email === third.email)).toMatchObject({
      full_name: third.name,
      source: third.source ?? null,
    });
    const created = persons().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ name: 'New Person', source: 'Referral' });

    // An edit in Pipedrive reaches PostgreSQL (incremental read on updated_since).
    sim.update('persons', third.id, { name: 'Edited in Pipedrive' });
    await syncNow(core.id, async () => {
      const [row] = await sql('select full_name from people where email = $1', [third.email]);
      return row?.full_name === 'Edited in Pipedrive';
    });

    // An edit in PostgreSQL reaches Pipedrive (the option's label written as its id).
    await sql(`update people set full_name = 'Edited in PostgreSQL', source = 'Cold call' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const c = persons().find((x) => x.id === second.id);
      return c?.name === 'Edited in PostgreSQL' && c.source === 'Cold call';
    });

    // A conflict (both sides changed the same field) follows the winner side, Pipedrive. The
    // PostgreSQL edit wakes a run at once: the update is checked against a read by id right before
    // it is written, and refused as stale.
    sim.update('persons', first.id, { name: 'Pipedrive wins' });
    await sql(`update people set full_name = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select full_name from people where email = $1', [first.email]);
      return row?.full_name === 'Pipedrive wins';
    });
    expect(persons().find((x) => x.id === first.id)?.name).toBe('Pipedrive wins');

    // Deletes: deleted in Pipedrive (found by the id sweep) and deleted in PostgreSQL.
    const gone = seeded[10] as Person;
    sim.remove('persons', gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as Person).email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.email) && !persons().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 29 }]);
    expect(persons()).toHaveLength(29);

    // A 429 storm in the middle of the writes: Pipedrive answers POSTs with 429 more often than the
    // client retries, the run fails over to the queue's retry, and nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under Pipedrive's burst window.
    expect(before).toBe(0);
    await sql(
      `insert into people (email, full_name, source) select 'storm' || g || '@example.com', 'Storm No ' || g, 'Event' from generate_series(1, 15) g`,
    );
    sim.update('persons', (seeded[20] as Person).id, { name: 'During the storm' });
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'POST' });
    await syncNow(core.id, async () => {
      const all = persons();
      const [row] = await sql('select full_name from people where email = $1', [seeded[20]?.email]);
      return (
        all.filter((c) => c.email?.startsWith('storm')).length >= 15 && row?.full_name === 'During the storm'
      );
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => persons().filter((c) => c.email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = persons().filter((c) => c.email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    expect(storm.every((c) => c.source === 'Event')).toBe(true);
    const emails = persons().map((c) => c.email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails).toHaveLength(44);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 44 }]);
    const [stormRow] = await sql('select full_name from people where email = $1', [seeded[20]?.email]);
    expect(stormRow?.full_name).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate; both sides hold the same.
    await syncNow(core.id, () => true);
    expect(persons()).toHaveLength(44);
    const rows = await sql('select email, full_name, source from people');
    expect(rows).toHaveLength(44);
    for (const p of persons()) {
      const row = rows.find((r) => r.email === p.email);
      expect(row, p.email).toBeDefined();
      expect({ full_name: row?.full_name, source: row?.source ?? null }).toEqual({
        full_name: p.name,
        source: p.source ?? null,
      });
    }
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 240_000);

  it("a deal's owner and stage travel by name both ways; a stage Pipedrive does not have is an unmapped option", async () => {
    await setUp();
    await sql(
      `create table deals (id serial primary key, title text not null unique, stage text, owner text)`,
    );
    const conn = await api('POST', '/rest/external-connections', {
      type: 'pipedrive',
      connectionItems: { apiToken: sim.token },
    });
    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Pipedrive deals <-> deals' });
    await api('POST', '/rest/external-bases', {
      type: 'pipedrive',
      name: 'Pipedrive',
      remoteId: String(sim.state.companyId),
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Deals',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: pgConn.id,
      side: 'right',
    });
    type Column = {
      id: string;
      name: string;
      remoteId?: string;
      fieldType?: string;
      options?: { choices?: string[] };
    };
    type Table = { id: string; name: string; externalColumns: Column[] };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Deals') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'deals') as Table;
    const col = (tbl: Table, remoteId: string) => {
      const c = tbl.externalColumns.find((x) => (x.remoteId ?? x.name) === remoteId || x.name === remoteId);
      if (!c)
        throw new Error(`no column ${remoteId} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c;
    };
    // Stage and owner are selects of names: the stages of the pipelines, the company's users.
    expect(col(lt, 'stage_id')).toMatchObject({ fieldType: 'single_select' });
    expect(col(lt, 'stage_id').options?.choices).toEqual(sim.state.stages.map((x) => x.name));
    expect(col(lt, 'owner_id').options?.choices).toEqual(sim.state.users.map((x) => x.name));
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'title').id,
            columnMappings: [
              { leftColumnId: col(lt, 'title').id, rightColumnId: col(rt, 'title').id },
              { leftColumnId: col(lt, 'stage_id').id, rightColumnId: col(rt, 'stage').id },
              { leftColumnId: col(lt, 'owner_id').id, rightColumnId: col(rt, 'owner').id },
            ],
          },
        ],
      },
    });
    const dealsIn = () => sim.state.list('deals').filter((d) => !d.deleted);
    const stageName = (id: unknown) => sim.state.stages.find((x) => x.id === id)?.name;
    const userName = (id: unknown) => sim.state.users.find((x) => x.id === id)?.name;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(
      core.id,
      async () => (await sql('select count(*)::int as n from deals'))[0]?.n === dealsIn().length,
    );
    // Pipedrive's ids arrive as names.
    const rows = await sql('select title, stage, owner from deals');
    for (const d of dealsIn())
      expect(rows.find((r) => r.title === d.values.title)).toEqual({
        title: d.values.title,
        stage: stageName(d.values.stage_id),
        owner: userName(d.values.owner_id),
      });

    // Names set in PostgreSQL are written to Pipedrive as ids (a stage of the other pipeline moves it).
    const [a, b, c] = dealsIn();
    if (!a || !b || !c) throw new Error('the seed has deals');
    const sam = sim.state.users[1];
    if (!sam) throw new Error('no second user');
    await sql(`update deals set stage = 'Signed', owner = $2 where title = $1`, [a.values.title, sam.name]);
    await syncNow(core.id, () => {
      const d = sim.state.get('deals', a.id);
      return d?.values.stage_id === 6 && d.values.owner_id === sam.id;
    });
    expect(sim.state.get('deals', a.id)?.values.pipeline_id).toBe(2);

    // A stage moved in Pipedrive arrives in PostgreSQL by its name.
    sim.update('deals', b.id, { stage_id: 2 });
    await syncNow(core.id, async () => {
      const [row] = await sql('select stage from deals where title = $1', [b.values.title]);
      return row?.stage === 'Contact Made';
    });

    // A stage Pipedrive does not have: the engine's unmapped_option issue, and Pipedrive is untouched.
    const before = sim.state.get('deals', c.id)?.values.stage_id;
    await sql(`update deals set stage = 'Closing' where title = $1`, [c.values.title]);
    let issues: { code: string; userFacingMessage: string }[] = [];
    await syncNow(core.id, async () => {
      issues = (
        await api(
          'GET',
          `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, status: 'open' }))}`,
        )
      ).items;
      return issues.length > 0;
    });
    expect(issues.map((i) => i.code)).toEqual(['unmapped_option']);
    expect(issues[0]?.userFacingMessage).toMatch(/Closing/);
    expect(sim.state.get('deals', c.id)?.values.stage_id).toBe(before);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 180_000);
});
