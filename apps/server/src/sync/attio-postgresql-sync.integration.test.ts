import { randomBytes } from 'node:crypto';
import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Attio (the simulator, as LOCKSTEP_ATTIO_API_URL) <-> PostgreSQL, set up over REST as a user would
// with an API key, and run by the real job queue with the server's own Attio wiring. Attio has no
// modified-since filter: its changes are found by the connector's scan compared with the last read,
// at each sync-now (webhooks are tested in routes/webhooks/attio-webhook.integration.test.ts).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: AttioSimulator;
let pgUrl = '';

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  sim = await startAttioSimulator({ idSeed: 11 });
  t = await createTestApp({ LOCKSTEP_ATTIO_API_URL: sim.url });
  user = await signUp(t.app, 'attio-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `attio_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table people (id serial primary key, email text not null unique, first_name text, last_name text, job_title text)`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Person = { id: string; email?: string; first?: string; last?: string; job?: string; emails: string[] };

/** The people as Attio holds them (active values). */
function people(): Person[] {
  return sim.state.queryableRecords('people').map((r) => {
    const v = sim.read('people', r.id).values as Record<string, Record<string, string>[]>;
    const emails = (v.email_addresses ?? []).map((e) => e.email_address as string);
    return {
      id: r.id,
      email: emails[0],
      emails,
      first: v.name?.[0]?.first_name,
      last: v.name?.[0]?.last_name,
      job: v.job_title?.[0]?.value,
    };
  });
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Attio <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'attio',
      connectionItems: { apiKey: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(sim.state.workspace.id);
    const seeded = people();
    expect(seeded).toHaveLength(30);
    const [first, second, third] = seeded as [Person, Person, Person];
    // PostgreSQL already knows two of the people (other names) and one person Attio does not.
    await sql(
      `insert into people (email, first_name, last_name, job_title) values ($1, 'Old', 'Name 1', 'Intern'), ($2, 'Old', 'Name 2', null), ('new.person@example.com', 'New', 'Person', 'Founder')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Attio people <-> people' });
    await api('POST', '/rest/external-bases', {
      type: 'attio',
      name: 'Attio',
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
      ['Email addresses', 'email'],
      ['Name (first)', 'first_name'],
      ['Name (last)', 'last_name'],
      ['Job title', 'job_title'],
    ] as const;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email addresses'),
            columnMappings: pairs.map(([l, r]) => ({ leftColumnId: col(lt, l), rightColumnId: col(rt, r) })),
          },
        ],
      },
    });

    // First sync: matched on email (Attio, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from people'))[0]?.n === 31);
    expect(people()).toHaveLength(31);
    const rows = await sql('select email, first_name, last_name, job_title from people order by id');
    expect(rows.find((p) => p.email === first.email)).toMatchObject({
      first_name: first.first,
      last_name: first.last,
      job_title: first.job ?? null,
    });
    expect(rows.find((p) => p.email === third.email)).toMatchObject({ first_name: third.first });
    const created = people().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ first: 'New', last: 'Person', job: 'Founder' });

    // An edit in Attio reaches PostgreSQL (found by the scan compared with the last read).
    sim.update('people', third.id, { job_title: 'Edited in Attio' });
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from people where email = $1', [third.email]);
      return row?.job_title === 'Edited in Attio';
    });

    // An edit in PostgreSQL reaches Attio; the person's name keeps its other part.
    await sql(`update people set last_name = 'Edited in PostgreSQL', job_title = 'CFO' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const c = people().find((x) => x.id === second.id);
      return c?.last === 'Edited in PostgreSQL' && c.job === 'CFO' && c.first === second.first;
    });

    // A conflict (both sides changed the same field) follows the winner side, Attio: the update is
    // checked against a read by id right before it is written, and refused if stale.
    sim.update('people', first.id, { job_title: 'Attio wins' });
    await sql(`update people set job_title = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from people where email = $1', [first.email]);
      return row?.job_title === 'Attio wins';
    });
    expect(people().find((x) => x.id === first.id)?.job).toBe('Attio wins');

    // Deletes: deleted in Attio (an id the scan no longer finds, confirmed by id) and in PostgreSQL.
    const gone = seeded[10] as Person;
    sim.remove('people', gone.id);
    await sql(`delete from people where email = $1`, [(seeded[11] as Person).email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from people');
      return !rows.some((r) => r.email === gone.email) && !people().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 29 }]);
    expect(people()).toHaveLength(29);

    // A 429 storm in the middle of the writes: Attio answers the creates (asserts on the email) with
    // 429 more often than the client retries, the run fails over to the queue's retry, and nothing
    // is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under Attio's limits.
    expect(before).toBe(0);
    await sql(
      `insert into people (email, first_name, last_name, job_title) select 'storm' || g || '@example.com', 'Storm', 'No ' || g, 'Engineer' from generate_series(1, 15) g`,
    );
    sim.update('people', (seeded[20] as Person).id, { job_title: 'During the storm' });
    sim.faults.next({ kind: 'rate_limit', count: 7, method: 'PUT' });
    await syncNow(core.id, async () => {
      const all = people();
      const [row] = await sql('select job_title from people where email = $1', [seeded[20]?.email]);
      return (
        all.filter((c) => c.email?.startsWith('storm')).length >= 15 && row?.job_title === 'During the storm'
      );
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => people().filter((c) => c.email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(7);
    const storm = people().filter((c) => c.email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    const emails = people().flatMap((c) => c.emails);
    expect(new Set(emails).size).toBe(emails.length);
    expect(people()).toHaveLength(44);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 44 }]);
    const [stormRow] = await sql('select job_title from people where email = $1', [seeded[20]?.email]);
    expect(stormRow?.job_title).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(people()).toHaveLength(44);
    expect(await sql('select count(*)::int as n from people')).toEqual([{ n: 44 }]);
    // Both sides hold the same values.
    const pgRows = await sql('select email, first_name, last_name, job_title from people order by email');
    const attio = people().map((c) => ({
      email: c.email,
      first_name: c.first ?? null,
      last_name: c.last ?? null,
      job_title: c.job ?? null,
    }));
    const byEmail = (a: { email?: string }, b: { email?: string }) =>
      String(a.email) < String(b.email) ? -1 : 1;
    expect(pgRows.map((r) => ({ ...r })).sort(byEmail)).toEqual(attio.sort(byEmail));
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 240_000);
});
