import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { SYNC_DRY_RUN } from '../jobs/sync-dry-run';
import { SYNC_RUN } from '../jobs/sync-run';

// Dry runs (issue 23, item 8) between two real PostgreSQL databases, through the real queue and
// workers: a dry pass plans exactly what the next run would write and writes nothing anywhere;
// dry-run mode turns wake-ups into passes; applying writes, discarding keeps the changes waiting.
let t: TestApp;
let api: Api;
let other: Api;
let otherAuth: Record<string, string>;
let coreBaseId = '';
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);
const people = async (side: 'left' | 'right') =>
  (await sql(side, 'select email, name from people order by email')) as { email: string; name: string }[];

type Write = {
  tableMappingId: string;
  side: string;
  kind: string;
  recordId: string | null;
  sourceId: string | null;
  name: string | null;
  fields: { field: string; before: unknown; after: unknown }[];
};
const plan = async (query = '') => api('GET', `/rest/core-bases/${coreBaseId}/dry-run${query}`);
/**
 * Nothing of this sync waiting or under way in the queue (runs and dry passes; a pass writes no
 * sync_log row, so `running` cannot see one). A wake-up that came while a pass ran queues another
 * pass, which would otherwise plan again in the middle of the next test.
 */
const queueIdle = async () =>
  Number(
    (
      await t.ctx.pool.query(
        `select count(*)::int as n from pgboss.job where name = any($1) and singleton_key = $2 and state in ('created', 'retry', 'active')`,
        [[SYNC_RUN, SYNC_DRY_RUN], coreBaseId],
      )
    ).rows[0]?.n,
  ) === 0;
const running = async () =>
  (await t.ctx.db
    .selectFrom('sync_log')
    .select('id')
    .where('core_base_id', '=', coreBaseId)
    .where('status', '=', 'running')
    .executeTakeFirst()) !== undefined;

/** Everything of the runtime a run moves in Lockstep's database, as rows. */
async function lockstepRows() {
  const db = t.ctx.db;
  const of = <T>(rows: Promise<T[]>) => rows.then((r) => JSON.parse(JSON.stringify(r)) as T[]);
  return {
    cursors: await of(db.selectFrom('sync_cursor').selectAll().orderBy('external_table_id').execute()),
    links: await of(
      db
        .selectFrom('core_meta_record')
        .selectAll()
        .where('core_base_id', '=', coreBaseId)
        .orderBy('id')
        .execute(),
    ),
    runs: await of(
      db.selectFrom('sync_log').selectAll().where('core_base_id', '=', coreBaseId).orderBy('id').execute(),
    ),
    operations: await of(
      db
        .selectFrom('sync_log_entry')
        .selectAll()
        .where('core_base_id', '=', coreBaseId)
        .orderBy('id')
        .execute(),
    ),
    pendingWrites: await of(db.selectFrom('pending_write').selectAll().orderBy('idempotency_key').execute()),
    pendingRelations: await of(db.selectFrom('pending_relation').selectAll().orderBy('id').execute()),
    issues: await of(
      db.selectFrom('sync_error').selectAll().where('core_base_id', '=', coreBaseId).orderBy('id').execute(),
    ),
    traces: await of(
      db.selectFrom('trace_log').selectAll().where('core_base_id', '=', coreBaseId).orderBy('id').execute(),
    ),
    firstSync: await of(db.selectFrom('first_sync_state').selectAll().execute()),
  };
}

/** The latest pass, once it has finished and `check` holds. */
async function finishedPass(
  what: string,
  check: (answer: { pass: { status: string }; writes: { total: number } }) => boolean = () => true,
) {
  let answer: Awaited<ReturnType<typeof plan>> = null;
  await until(async () => {
    answer = await plan();
    return answer.pass !== null && ['done', 'failed'].includes(answer.pass.status) && check(answer);
  }, what);
  return answer as unknown as Awaited<ReturnType<typeof plan>>;
}

beforeAll(async () => {
  t = await createTestApp();
  api = apiAs(t.app, (await signUp(t.app, 'dry-run@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  otherAuth = (await signUp(t.app, 'dry-run-other@test.test')).auth;
  other = apiAs(t.app, otherAuth);
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `dr_${side}_${suffix}`);
    urls[side] = databaseUrl(`dr_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) values ('ada@example.com', 'Ada'), ('alan@example.com', 'Alan'), ('grace@example.com', 'Grace')`,
  );
  const core = await setUpPeopleSync(api, urls, { name: 'Dry runs', conflictWinnerSide: 'left' });
  coreBaseId = core.id;
  await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
  await until(async () => (await people('right')).length === 3, 'first sync');
  await until(async () => !(await running()), 'idle after the first sync');
  // Off: nothing but the dry pass reads this sync while the first test looks at what it stores.
  await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'off' });
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('dry runs of a PostgreSQL <-> PostgreSQL sync', () => {
  it('plans exactly an update, a create and a delete with before and after, and writes nothing to either app or to Lockstep', async () => {
    await sql('left', `update people set name = 'Ada Lovelace' where email = 'ada@example.com'`);
    await sql('left', `insert into people (email, name) values ('linus@example.com', 'Linus')`);
    await sql('left', `delete from people where email = 'alan@example.com'`);
    const apps = { left: await people('left'), right: await people('right') };
    const before = await lockstepRows();

    const { dryRunId } = await api('POST', `/rest/core-bases/${coreBaseId}/dry-run`);
    expect(dryRunId).toMatch(/^[0-9a-f-]{36}$/);
    const answer = await finishedPass('the dry pass');
    expect(answer.pass).toMatchObject({ id: dryRunId, status: 'done', error: null, total: 3 });
    expect(answer.pass.tablePairs).toEqual([
      expect.objectContaining({ leftTable: 'people', rightTable: 'people', create: 1, update: 1, delete: 1 }),
    ]);
    const writes = answer.writes.items as Write[];
    expect(answer.writes.total).toBe(3);
    const rightId = async (email: string) =>
      String((await sql('right', `select id from people where email = '${email}'`))[0]?.id);
    const leftId = async (email: string) =>
      String((await sql('left', `select id from people where email = '${email}'`))[0]?.id);
    expect(
      writes.map((w) => ({ ...w, fields: [...w.fields].sort((a, b) => a.field.localeCompare(b.field)) })),
    ).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          side: 'right',
          kind: 'update',
          recordId: await rightId('ada@example.com'),
          name: 'ada@example.com',
          fields: [{ fieldId: 'name', field: 'name', before: 'Ada', after: 'Ada Lovelace' }],
        }),
        expect.objectContaining({
          side: 'right',
          kind: 'create',
          recordId: null,
          sourceId: await leftId('linus@example.com'),
          name: 'linus@example.com',
          fields: [
            { fieldId: 'email', field: 'email', before: null, after: 'linus@example.com' },
            { fieldId: 'name', field: 'name', before: null, after: 'Linus' },
          ],
        }),
        expect.objectContaining({
          side: 'right',
          kind: 'delete',
          recordId: await rightId('alan@example.com'),
          name: 'alan@example.com',
          fields: expect.arrayContaining([{ fieldId: 'name', field: 'name', before: 'Alan', after: null }]),
        }),
      ]),
    );
    // Filters and paging.
    const updates = await plan('?kind=update');
    expect(updates.writes.items.map((w: Write) => w.kind)).toEqual(['update']);
    const paged = await plan('?skip=1&take=1');
    expect(paged.writes).toMatchObject({ total: 3, skip: 1, take: 1 });
    expect(paged.writes.items).toHaveLength(1);
    const pair = answer.pass.tablePairs[0].tableMappingId;
    expect((await plan(`?tableMappingId=${pair}`)).writes.total).toBe(3);

    // Nothing moved: neither app, nor the cursors, links, shadows, runs, logs, pending writes or issues.
    expect({ left: await people('left'), right: await people('right') }).toEqual(apps);
    expect(await lockstepRows()).toEqual(before);

    // A new pass replaces the plan: one pass kept, the same three writes.
    const again = await api('POST', `/rest/core-bases/${coreBaseId}/dry-run`);
    const second = await finishedPass(
      'the second pass',
      (a) => (a.pass as { id?: string }).id === again.dryRunId,
    );
    expect(second.writes.total).toBe(3);
    expect(
      await t.ctx.db.selectFrom('dry_run').select('id').where('core_base_id', '=', coreBaseId).execute(),
    ).toEqual([{ id: again.dryRunId }]);
    expect(await lockstepRows()).toEqual(before);
  }, 60_000);

  it('in dry-run mode a change wakes a dry pass instead of a run: the plan shows it and the other side stays as it was', async () => {
    const right = await people('right');
    const since = new Date();
    // On and in dry-run mode: switching on wakes the sync, and that wake-up makes a pass.
    const patched = await api('PATCH', `/rest/core-bases/${coreBaseId}`, { dryRun: true, syncState: 'on' });
    expect(patched.dryRun).toBe(true);
    await finishedPass('a pass on switching on', (a) => a.writes.total === 3);
    // A change in the app wakes the sync (change capture): a pass, not a run.
    await sql('left', `update people set name = 'Grace Hopper' where email = 'grace@example.com'`);
    const answer = await finishedPass('a pass that shows the new change', (a) => a.writes.total === 4);
    expect(answer.dryRunMode).toBe(true);
    expect(answer.writes.items).toContainEqual(
      expect.objectContaining({
        kind: 'update',
        name: 'grace@example.com',
        fields: [{ fieldId: 'name', field: 'name', before: 'Grace', after: 'Grace Hopper' }],
      }),
    );
    // "Sync now" is a wake-up too.
    await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`);
    await finishedPass('a pass after sync now', (a) => a.pass.status === 'done' && a.writes.total === 4);
    await until(async () => !(await running()) && (await queueIdle()), 'idle');
    expect(await people('right')).toEqual(right);
    const runs = await t.ctx.db
      .selectFrom('sync_log')
      .select('status')
      .where('core_base_id', '=', coreBaseId)
      .where('started_at', '>=', since)
      .execute();
    expect(runs).toEqual([]);
  }, 60_000);

  it('discarding clears the plan and keeps dry-run mode on; the changes still wait and show again on the next pass', async () => {
    const right = await people('right');
    await until(queueIdle, 'no pass waiting or under way');
    // The four planned writes (and any a newer pass had planned so far).
    expect(
      (await api('POST', `/rest/core-bases/${coreBaseId}/dry-run/discard`)).discarded,
    ).toBeGreaterThanOrEqual(4);
    const cleared = await plan();
    expect(cleared).toMatchObject({
      dryRunMode: true,
      pass: { status: 'discarded', total: 0 },
      writes: { total: 0 },
    });
    expect((await api('GET', `/rest/core-bases/${coreBaseId}`)).dryRun).toBe(true);
    expect(await people('right')).toEqual(right);
    await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`);
    const again = await finishedPass('the changes show again', (a) => a.writes.total === 4);
    expect(again.dryRunMode).toBe(true);
    expect(await people('right')).toEqual(right);
    await until(queueIdle, 'no pass waiting or under way');
  }, 60_000);

  it('another user can neither read, start, apply nor discard the plan (404)', async () => {
    for (const [method, path] of [
      ['GET', 'dry-run'],
      ['POST', 'dry-run'],
      ['POST', 'dry-run/apply'],
      ['POST', 'dry-run/discard'],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: `/rest/core-bases/${coreBaseId}/${path}`,
        headers: otherAuth,
      });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json().response.userFacingMessage).toBeTruthy();
    }
    await expect(other('PATCH', `/rest/core-bases/${coreBaseId}`, { dryRun: false })).rejects.toThrow(/404/);
    expect((await plan()).writes.total).toBe(4);
    expect((await api('GET', `/rest/core-bases/${coreBaseId}`)).dryRun).toBe(true);
  });

  it('applying turns dry-run mode off, runs for real (the reviewed writes land) and clears the plan', async () => {
    expect(await api('POST', `/rest/core-bases/${coreBaseId}/dry-run/apply`)).toEqual({
      queued: expect.any(Boolean),
    });
    await until(
      async () => JSON.stringify(await people('right')) === JSON.stringify(await people('left')),
      'the apps in step',
    );
    expect(await people('right')).toEqual([
      { email: 'ada@example.com', name: 'Ada Lovelace' },
      { email: 'grace@example.com', name: 'Grace Hopper' },
      { email: 'linus@example.com', name: 'Linus' },
    ]);
    const answer = await plan();
    expect(answer).toMatchObject({
      dryRunMode: false,
      pass: { status: 'applied', total: 0 },
      writes: { total: 0 },
    });
    expect((await api('GET', `/rest/core-bases/${coreBaseId}`)).dryRun).toBe(false);
    // The mode is off: the next change is written by a run, not planned.
    await sql('left', `update people set name = 'Linus T.' where email = 'linus@example.com'`);
    await until(
      async () => (await people('right')).some((p) => p.name === 'Linus T.'),
      'a change written by a real run',
    );
    expect((await plan()).pass.status).toBe('applied');
  }, 60_000);
});
