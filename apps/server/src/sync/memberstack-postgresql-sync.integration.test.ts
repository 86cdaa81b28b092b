import { randomBytes } from 'node:crypto';
import { type MemberstackSimulator, startMemberstackSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Memberstack (the simulator, as LOCKSTEP_MEMBERSTACK_API_URL) <-> PostgreSQL, set up over REST as a
// user would with a test mode secret key, and run by the real job queue with the server's own
// Memberstack wiring. Memberstack has no modified-since filter: its changes are found by the
// connector's pass compared with the last read, at each sync-now. An email change is written once
// it has stayed the same (1 s here, LOCKSTEP_MEMBERSTACK_EMAIL_STABLE_SECONDS; 60 s by default).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: MemberstackSimulator;
let pgUrl = '';

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

beforeAll(async () => {
  // Memberstack's test mode: 40 seeded members, at most 50, 25 requests a second.
  sim = await startMemberstackSimulator({ idSeed: 11 });
  t = await createTestApp({
    LOCKSTEP_MEMBERSTACK_API_URL: sim.url,
    LOCKSTEP_MEMBERSTACK_EMAIL_STABLE_SECONDS: '1',
  });
  user = await signUp(t.app, 'memberstack-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `memberstack_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table members (id serial primary key, email text not null unique, first_name text, company text, job_title text)`,
  );
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

type Member = { id: string; email: string; first?: string; company?: string; job?: string };

/** The members as Memberstack holds them (test mode). */
function members(): Member[] {
  return [...sim.state.members.values()]
    .filter((m) => m.mode === 'sandbox')
    .map((m) => ({
      id: m.id,
      email: m.email,
      first: m.customFields['first-name'] as string | undefined,
      company: m.customFields.company as string | undefined,
      job: m.customFields['job-title'] as string | undefined,
    }));
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Memberstack <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways (an email once stable), a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'memberstack',
      connectionItems: { secretKey: sim.token },
    });
    // The key's mode is shown on the connection, the key itself never.
    expect(conn.connectionItems).toEqual({ mode: 'test' });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    expect(base).toMatchObject({ remoteId: 'test', name: 'Memberstack (test mode)' });
    const seeded = members();
    expect(seeded).toHaveLength(40);
    const ids = sim.seeded?.members as string[];
    const byId = (id: string) => seeded.find((m) => m.id === id) as Member;
    const [first, second, third] = ids.map(byId) as [Member, Member, Member];
    // PostgreSQL already knows two of the members (other values) and one member Memberstack does not.
    await sql(
      `insert into members (email, first_name, company, job_title) values ($1, 'Old', 'Old Co 1', 'Intern'), ($2, 'Old', 'Old Co 2', null), ('new.member@example.com', 'New', 'Newco', 'Founder')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Memberstack members <-> members' });
    await api('POST', '/rest/external-bases', {
      type: 'memberstack',
      name: 'Memberstack',
      remoteId: base?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Members',
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
    const tables = full.leftExternalBase.externalTables as Table[];
    expect(tables.map((x) => x.name).sort()).toEqual(['Members', 'Plans']);
    const lt = tables.find((x) => x.name === 'Members') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'members') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const pairs = [
      ['Email', 'email'],
      ['first-name', 'first_name'],
      ['company', 'company'],
      ['job-title', 'job_title'],
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

    // First sync: matched on email (Memberstack, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from members'))[0]?.n === 41);
    expect(members()).toHaveLength(41);
    const rows = await sql('select email, first_name, company, job_title from members order by id');
    expect(rows.find((p) => p.email === first.email)).toMatchObject({
      first_name: first.first,
      company: first.company,
      job_title: first.job ?? null,
    });
    expect(rows.find((p) => p.email === third.email)).toMatchObject({ first_name: third.first });
    const created = members().find((c) => c.email === 'new.member@example.com');
    expect(created).toMatchObject({ first: 'New', company: 'Newco', job: 'Founder' });
    // Made with a password of its own (Memberstack requires one).
    expect(sim.state.get(created?.id as string)?.password.length).toBeGreaterThanOrEqual(8);

    // An edit in Memberstack (the dashboard) reaches PostgreSQL (found by the pass compared with the last read).
    sim.update(third.id, { customFields: { 'job-title': 'Edited in Memberstack' } });
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from members where email = $1', [third.email]);
      return row?.job_title === 'Edited in Memberstack';
    });

    // An edit in PostgreSQL reaches Memberstack, the member's other custom fields kept.
    await sql(`update members set company = 'Edited in PostgreSQL' where email = $1`, [second.email]);
    await syncNow(core.id, () => {
      const m = members().find((x) => x.id === second.id);
      return m?.company === 'Edited in PostgreSQL' && m.first === second.first && m.job === second.job;
    });
    expect(sim.state.get(second.id)?.customFields.country).toBeDefined();

    // An email changed in PostgreSQL: written once it has stayed the same (the queue runs the chunk
    // again), on the same member, with the other field of the same edit.
    await sql(`update members set email = 'renamed@example.com', job_title = 'Renamed' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const m = sim.state.get(second.id);
      return m?.email === 'renamed@example.com' && m.customFields['job-title'] === 'Renamed';
    });
    expect(members()).toHaveLength(41);
    expect(sim.state.findByEmail(second.email)).toBeUndefined();

    // A conflict (both sides changed the same field) follows the winner side, Memberstack: the update
    // is checked against a read by id right before it is written, and refused if stale.
    sim.update(first.id, { customFields: { 'job-title': 'Memberstack wins' } });
    await sql(`update members set job_title = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from members where email = $1', [first.email]);
      return row?.job_title === 'Memberstack wins';
    });
    expect(members().find((x) => x.id === first.id)?.job).toBe('Memberstack wins');

    // Deletes: deleted in Memberstack (an id the pass no longer finds, confirmed by id) and in PostgreSQL.
    const gone = byId(ids[10] as string);
    const alsoGone = byId(ids[11] as string);
    sim.remove(gone.id);
    await sql(`delete from members where email = $1`, [alsoGone.email]);
    await syncNow(core.id, async () => {
      const rows = await sql('select email from members');
      return !rows.some((r) => r.email === gone.email) && !members().some((c) => c.id === alsoGone.id);
    });
    expect(await sql('select count(*)::int as n from members')).toEqual([{ n: 39 }]);
    expect(members()).toHaveLength(39);

    // A 429 storm in the middle of the writes: Memberstack answers the member creates with 429 more
    // often than the client retries, the run fails over to the queue's retry, and nothing is lost
    // or doubled.
    const before = sim.requestLog.count({ status: 429 });
    await sql(
      `insert into members (email, first_name, company, job_title) select 'storm' || g || '@example.com', 'Storm', 'Storm Co', 'Engineer' from generate_series(1, 6) g`,
    );
    const during = byId(ids[20] as string);
    sim.update(during.id, { customFields: { 'job-title': 'During the storm' } });
    sim.faults.next({ kind: 'rate_limit', count: 10, method: 'POST', path: '/members' });
    const stormed = () => members().filter((c) => c.email.startsWith('storm')).length >= 6;
    await syncNow(core.id, async () => {
      const [row] = await sql('select job_title from members where email = $1', [during.email]);
      return stormed() && row?.job_title === 'During the storm';
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(core.id, stormed, 30_000).catch(() => {
        throw error;
      });
    });
    expect(sim.requestLog.count({ status: 429 }) - before).toBeGreaterThanOrEqual(10);
    const storm = members().filter((c) => c.email.startsWith('storm'));
    expect(storm).toHaveLength(6);
    for (const s of storm) expect(s).toMatchObject({ first: 'Storm', company: 'Storm Co', job: 'Engineer' });
    const emails = members().map((c) => c.email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(members()).toHaveLength(45);
    expect(await sql('select count(*)::int as n from members')).toEqual([{ n: 45 }]);
    const [stormRow] = await sql('select job_title from members where email = $1', [during.email]);
    expect(stormRow?.job_title).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    const writes =
      sim.requestLog.count({ method: 'POST' }) +
      sim.requestLog.count({ method: 'PATCH' }) +
      sim.requestLog.count({ method: 'DELETE' });
    await syncNow(core.id, () => true);
    expect(
      sim.requestLog.count({ method: 'POST' }) +
        sim.requestLog.count({ method: 'PATCH' }) +
        sim.requestLog.count({ method: 'DELETE' }),
    ).toBe(writes);
    expect(members()).toHaveLength(45);
    expect(await sql('select count(*)::int as n from members')).toEqual([{ n: 45 }]);
    // Both sides hold the same values.
    const pgRows = await sql('select email, first_name, company, job_title from members order by email');
    const memberstack = members().map((c) => ({
      email: c.email,
      first_name: c.first ?? null,
      company: c.company ?? null,
      job_title: c.job ?? null,
    }));
    const byEmail = (a: { email?: string }, b: { email?: string }) =>
      String(a.email) < String(b.email) ? -1 : 1;
    expect(pgRows.map((r) => ({ ...r })).sort(byEmail)).toEqual(memberstack.sort(byEmail));
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 300_000);
});
