import { randomBytes } from 'node:crypto';
import type { AirtableSimulator } from '@lockstep/simulators';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { airtableRuntimeFactory } from './runtime-connectors';

// Airtable (the server's sandbox simulator) <-> PostgreSQL, set up over REST as a user would and run
// by the real job queue. Airtable has no push here: its changes are picked up by sync-now.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: AirtableSimulator;
let pgUrl = '';
const json = { 'content-type': 'application/json' };

async function sql(text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

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

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_SANDBOX: '1' });
  sim = t.ctx.sandbox?.airtable as AirtableSimulator;
  // The real runtime factory, with a short wait after a 429 (Airtable's is 30 s) to keep the test fast.
  t.ctx.runtimeConnectors.register(
    'airtable',
    airtableRuntimeFactory({
      sandboxUrls: () => t.ctx.sandbox?.urls() ?? [],
      pool: t.ctx.pool,
      client: { rateLimitWaitMs: 250 },
    }),
  );
  user = await signUp(t.app, 'airtable-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
/**
 * A fresh database for each attempt of the test (vitest retries it once): a retry must not meet the
 * rows, and the still running sync, of the attempt before it.
 */
async function freshDatabase() {
  const name = `at_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, full_name text, status text, notes text)`,
  );
}

afterAll(async () => {
  await t.close();
});

/** The sandbox base's contacts as Airtable holds them, by field name. */
function contacts(
  baseId: string,
): { id: string; Name?: string; Email?: string; Status?: string; Notes?: string }[] {
  const table = sim.state.table(baseId, 'Contacts');
  const nameOf = new Map(table.fields.map((f) => [f.id, f.name]));
  return [...table.records.values()].map((r) => {
    const out: Record<string, unknown> = { id: r.id };
    for (const [fieldId, value] of r.cells) out[nameOf.get(fieldId) ?? fieldId] = value;
    return out as { id: string; Name?: string; Email?: string; Status?: string; Notes?: string };
  });
}

const runs = (coreBaseId: string) => syncRuns(t.ctx.db, coreBaseId);

/** Waits until every run of the sync has finished and `check` holds. */
const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Airtable <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    await freshDatabase();
    // The sandbox's simulator is shared by attempts: count this attempt's 429s only.
    const earlierRateLimits = sim.requestLog.count({ status: 429 });
    const conn = await api('POST', '/rest/sandbox-apps/airtable/connect');
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    const baseId = base?.remoteId as string;
    const seeded = contacts(baseId);
    expect(seeded).toHaveLength(50);
    const [first, second, third] = seeded as [(typeof seeded)[0], (typeof seeded)[0], (typeof seeded)[0]];
    // PostgreSQL already knows two of the contacts (other names) and one person Airtable does not.
    await sql(
      `insert into people (email, full_name, status, notes) values ($1, 'Old name 1', 'Lead', 'from pg'), ($2, 'Old name 2', null, null), ('new.person@example.com', 'New Person', 'Qualified', 'only in pg')`,
      [first.Email, second.Email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Airtable CRM <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'airtable',
      name: 'CRM',
      remoteId: baseId,
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
      if (!c) throw new Error(`no column ${name}`);
      return c.id;
    };
    const pairs = [
      ['Email', 'email'],
      ['Name', 'full_name'],
      ['Status', 'status'],
      ['Notes', 'notes'],
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

    // First sync: matched on email (Airtable, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 51);
    expect(contacts(baseId)).toHaveLength(51);
    const people = await sql('select email, full_name, status, notes from people order by id');
    expect(people.find((p) => p.email === first.Email)).toMatchObject({
      full_name: first.Name,
      status: first.Status,
    });
    expect(people.find((p) => p.email === third.Email)).toMatchObject({ full_name: third.Name });
    const created = contacts(baseId).find((c) => c.Email === 'new.person@example.com');
    expect(created).toMatchObject({ Name: 'New Person', Status: 'Qualified', Notes: 'only in pg' });

    // An edit in Airtable reaches PostgreSQL (sync now: the poll schedule's job).
    sim.mutateRecord(baseId, 'Contacts', third.id, { Name: 'Edited in Airtable' });
    await syncNow(core.id, async () => {
      const [row] = await sql('select full_name from people where email = $1', [third.Email]);
      return row?.full_name === 'Edited in Airtable';
    });

    // An edit in PostgreSQL reaches Airtable.
    await sql(`update people set notes = 'Edited in PostgreSQL', status = 'Customer' where email = $1`, [
      second.Email,
    ]);
    await syncNow(core.id, () => {
      const c = contacts(baseId).find((x) => x.id === second.id);
      return c?.Notes === 'Edited in PostgreSQL' && c.Status === 'Customer';
    });

    // A conflict (both sides changed the same field) follows the winner side, Airtable.
    sim.mutateRecord(baseId, 'Contacts', first.id, { Name: 'Airtable wins' });
    await sql(`update people set full_name = 'PostgreSQL loses' where email = $1`, [first.Email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select full_name from people where email = $1', [first.Email]);
      return row?.full_name === 'Airtable wins';
    });
    expect(contacts(baseId).find((x) => x.id === first.id)?.Name).toBe('Airtable wins');

    // Deletes: in Airtable (found by the id sweep) and in PostgreSQL.
    const gone = seeded[10] as (typeof seeded)[0];
    sim.deleteRecord(baseId, 'Contacts', gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as (typeof seeded)[0]).Email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return (
        !rows.some((r) => r.email === gone.Email) && !contacts(baseId).some((c) => c.id === seeded[11]?.id)
      );
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 49 }]);
    expect(contacts(baseId)).toHaveLength(49);

    // A 429 storm in the middle of the writes: Airtable answers creates with 429 more often than
    // the client retries, the run fails over to the queue's retry, and nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under Airtable's 5 requests per second.
    expect(before - earlierRateLimits).toBe(0);
    await sql(
      `insert into people (email, full_name, status) select 'storm' || g || '@example.com', 'Storm ' || g, 'Lead' from generate_series(1, 15) g`,
    );
    sim.mutateRecord(baseId, 'Contacts', (seeded[20] as (typeof seeded)[0]).id, {
      Notes: 'During the storm',
    });
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'POST' });
    await syncNow(core.id, async () => {
      const all = contacts(baseId);
      const [row] = await sql('select notes from people where email = $1', [seeded[20]?.Email]);
      return (
        all.filter((c) => c.Email?.startsWith('storm')).length >= 15 && row?.notes === 'During the storm'
      );
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => contacts(baseId).filter((c) => c.Email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = contacts(baseId).filter((c) => c.Email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    expect(new Set(storm.map((c) => c.Email)).size).toBe(15);
    const emails = contacts(baseId).map((c) => c.Email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(contacts(baseId)).toHaveLength(64);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 64 }]);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const last = (await runs(core.id)).filter((r) => r.status === 'failed');
    expect(last).toEqual([]);
    // Airtable locks a base out for 30 s after a 429: a lockout may fall inside this test.
  }, 240_000);
});
