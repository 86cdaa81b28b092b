import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { releaseIdleChangeCapture } from '../jobs/release-idle-change-capture';

// Two real PostgreSQL databases through the real queue and the worker's change listener: the left
// captures changes with triggers, the right with logical decoding (the run's PostgreSQL has
// wal_level=logical). Edits reach the other side in seconds both ways, Lockstep's own writes never
// come back as edits, and the slot is let go when nothing reads it.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
let coreId = '';
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

async function until(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}
const nameOf = async (side: 'left' | 'right', email: string) =>
  (await sql(side, `select name from people where email = '${email}'`))[0]?.name as string | undefined;
const slots = async () =>
  (await sql('right', `select slot_name from pg_replication_slots where database = current_database()`))
    .length;

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'logical@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `ld_${side}_${suffix}`);
    urls[side] = databaseUrl(`ld_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, 20) g`,
  );
  await sql('right', `insert into people (email, name) values ('r1@example.com', 'Right One')`);
});
afterAll(async () => {
  await sql(
    'right',
    `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()`,
  );
  await t.close();
});

describe('PostgreSQL <-> PostgreSQL with logical decoding on one side', () => {
  it('carries edits both ways in seconds without echoes, and lets the slot go when the sync is off', async () => {
    const core = await setUpPeopleSync(api, urls, {
      name: 'Logical',
      items: { right: { changeCapture: 'logical' } },
    });
    coreId = core.id;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(
      async () =>
        (await sql('right', 'select count(*)::int as n from people'))[0]?.n === 21 &&
        (await sql('left', 'select count(*)::int as n from people'))[0]?.n === 21,
      'first sync',
    );
    const triggers = await sql('right', `select tgname from pg_trigger where tgrelid = 'people'::regclass`);
    expect(triggers, 'no trigger on the logical side').toEqual([]);
    expect(await slots()).toBe(1);
    // The slot and the WAL it keeps are shown where real time is debugged.
    const full = await api('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
    const state = await api('GET', `/rest/external-bases/${full.rightExternalBase.id}/webhook-state/debug`);
    expect(state.mechanism).toBe('postgres_logical_decoding');
    expect(state.changeCapture.logicalSlot).toMatchObject({
      name: expect.stringMatching(/^lockstep_\d+$/),
      walStatus: 'reserved',
      retainedBytes: expect.any(Number),
    });

    // A person edits the logical side: the listener drains the slot, NOTIFYs, and a run carries it.
    // Quiet first: a run still queued from the first sync (its recheck, say) would carry the edit
    // under its own trigger and hide whether the edit woke one.
    await until(async () => {
      const queued = await t.ctx.pool.query(
        `select 1 from pgboss.job where name = 'sync-run' and singleton_key = $1 and state in ('created', 'retry', 'active')`,
        [core.id],
      );
      return (
        queued.rowCount === 0 && !(await syncRuns(t.ctx.db, core.id)).some((r) => r.status === 'running')
      );
    }, 'no run queued or going');
    const before = (await syncRuns(t.ctx.db, core.id)).length;
    await sql('right', `update people set name = 'Edited on the right' where email = 'p3@example.com'`);
    await until(
      async () => (await nameOf('left', 'p3@example.com')) === 'Edited on the right',
      'right -> left',
    );
    const woken = await t.ctx.db
      .selectFrom('sync_log')
      .select('trigger')
      .where('core_base_id', '=', core.id)
      .orderBy('started_at')
      .offset(before)
      .execute();
    expect(
      woken.map((r) => r.trigger),
      'the edit woke a run (not the minute poll)',
    ).toContain('change');

    // And the other way: Lockstep's write on the logical side is not read back as an edit.
    await sql('left', `update people set name = 'Edited on the left' where email = 'p4@example.com'`);
    await until(
      async () => (await nameOf('right', 'p4@example.com')) === 'Edited on the left',
      'left -> right',
    );
    await until(async () => !(await syncRuns(t.ctx.db, core.id)).some((r) => r.status === 'running'), 'idle');
    const settled = (await syncRuns(t.ctx.db, core.id)).length;
    // Lockstep's write moved the WAL, so the listener drained it: an echo would wake a run that finds it.
    await new Promise((r) => setTimeout(r, 7_000));
    expect((await syncRuns(t.ctx.db, core.id)).length, 'no run woken by an echo').toBe(settled);
    const ops = await t.ctx.db
      .selectFrom('sync_log_entry')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('core_base_id', '=', core.id)
      .executeTakeFirstOrThrow();

    // Off: the hourly job drops the slot, so the right server keeps no WAL for Lockstep.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'off' });
    expect(await releaseIdleChangeCapture(t.ctx)).toHaveLength(1);
    expect(await slots()).toBe(0);
    // An edit made while no slot existed is not lost: back on, the right table is scanned again.
    await sql('right', `update people set name = 'Edited while off' where email = 'p5@example.com'`);
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await until(
      async () => (await nameOf('left', 'p5@example.com')) === 'Edited while off',
      'edit made while off',
    );
    expect(await slots()).toBe(1);
    expect((await sql('left', 'select count(*)::int as n from people'))[0]?.n, 'nothing doubled').toBe(21);
    const opsAfter = await t.ctx.db
      .selectFrom('sync_log_entry')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('core_base_id', '=', core.id)
      .executeTakeFirstOrThrow();
    // The rescan writes only what changed: the one edit.
    expect(Number(opsAfter.n) - Number(ops.n)).toBe(1);
  }, 120_000);

  it('carries a committed edit on the logical side across within a few WAL polls, not a timer tick', async () => {
    // The sync of the test above is on again with its slot. Each edit is made right after the
    // previous one arrived (as the latency bench does): a drain every 0.5 s made each wait a tick.
    await until(async () => !(await syncRuns(t.ctx.db, coreId)).some((r) => r.status === 'running'), 'idle');
    const watch = new pg.Client({ connectionString: urls.left });
    await watch.connect();
    const times: number[] = [];
    try {
      for (let i = 1; i <= 7; i++) {
        const email = `p${10 + i}@example.com`;
        await sql('right', `update people set name = 'Fast ${i}' where email = '${email}'`);
        const committed = performance.now();
        const end = committed + 10_000;
        for (;;) {
          const row = (await watch.query('select name from people where email = $1', [email])).rows[0];
          if (row?.name === `Fast ${i}`) break;
          if (performance.now() > end) throw new Error(`edit ${i} never arrived`);
          await new Promise((r) => setTimeout(r, 2));
        }
        times.push(performance.now() - committed);
      }
    } finally {
      await watch.end();
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    expect(median, `median of ${times.map((x) => x.toFixed(0)).join(', ')} ms`).toBeLessThan(300);
  }, 60_000);

  it('refuses logical decoding at connect time when the user may not use replication, and drops the slot when a connection is deleted', async () => {
    const role = `ld_plain_${suffix}`;
    await sql('right', `create role ${role} login password 'pw'`);
    const u = new URL(urls.right);
    u.username = role;
    u.password = 'pw';
    const refused = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: {
        ...(await signUp(t.app, `plain-${suffix}@test.test`)).auth,
        'content-type': 'application/json',
      },
      payload: {
        type: 'postgresql',
        connectionItems: { connectionString: u.toString(), changeCapture: 'logical' },
      },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().response.userFacingMessage).toContain(`ALTER ROLE "${role}" REPLICATION`);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: {
        ...(await signUp(t.app, `odd-${suffix}@test.test`)).auth,
        'content-type': 'application/json',
      },
      payload: {
        type: 'postgresql',
        connectionItems: { connectionString: urls.right, changeCapture: 'wal2json' },
      },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().response.userFacingMessage).toBe(
      'Change capture must be one of: triggers, logical.',
    );

    // The sync above left a slot on the right; deleting a logical connection to it drops the slot.
    expect(await slots()).toBe(1);
    const conn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: urls.right, changeCapture: 'logical' },
    });
    const deleted = await api('DELETE', `/rest/external-connections/${conn.id}`);
    expect(deleted.warning ?? null).toBeNull();
    expect(await slots()).toBe(0);
  }, 60_000);
});
