import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// Undo a run (issue 23, item 7) between two real PostgreSQL databases, through the real queue and
// workers: the undo writes back, in the app each operation wrote to, what was there before, and the
// engine carries it to the other app; a record changed since the run is held, never overwritten.
let t: TestApp;
let api: Api;
let auth: Record<string, string>;
let otherAuth: Record<string, string>;
let coreBaseId = '';
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);
const people = async (side: 'left' | 'right') =>
  (await sql(side, 'select email, name from people order by email')) as { email: string; name: string }[];
const both = async () => ({ left: await people('left'), right: await people('right') });

/** No run of the sync is running. */
const idle = async () =>
  (await t.ctx.db
    .selectFrom('sync_log')
    .select('id')
    .where('core_base_id', '=', coreBaseId)
    .where('status', '=', 'running')
    .executeTakeFirst()) === undefined;

/** The run that wrote `operation` on the right side to the record with this email (after `since`). */
async function runThatWrote(operation: 'create' | 'update' | 'delete', since: Date) {
  const rows = await t.ctx.db
    .selectFrom('sync_log_entry')
    .innerJoin('sync_log', 'sync_log.id', 'sync_log_entry.sync_log_id')
    .select(['sync_log.id as id'])
    .where('sync_log.core_base_id', '=', coreBaseId)
    .where('sync_log.started_at', '>=', since)
    .where('sync_log_entry.operation', '=', operation)
    .where('sync_log_entry.side', '=', 'right')
    .execute();
  return [...new Set(rows.map((r) => r.id))];
}

/** The latest finished sync run not undone yet: one its owner could undo. */
async function runNotUndone() {
  const undoneRuns = (
    await t.ctx.db.selectFrom('sync_log').select('undo_of').where('undo_of', 'is not', null).execute()
  ).map((r) => r.undo_of as string);
  return (
    await t.ctx.db
      .selectFrom('sync_log')
      .select('id')
      .where('core_base_id', '=', coreBaseId)
      .where('status', '=', 'done')
      .where('trigger', '!=', 'undo')
      .where('id', 'not in', undoneRuns)
      .orderBy('started_at', 'desc')
      .executeTakeFirstOrThrow()
  ).id;
}

const post = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'POST', url, headers });

async function undone(undoRunId: string) {
  let log: Awaited<ReturnType<Api>> = null;
  await until(
    async () => {
      log = await api('GET', `/rest/sync-logs/${undoRunId}`);
      return log.status !== 'running';
    },
    'the undo run finished',
    60_000,
  );
  return log as unknown as Awaited<ReturnType<Api>>;
}

beforeAll(async () => {
  t = await createTestApp();
  auth = (await signUp(t.app, 'undo@test.test')).auth;
  api = apiAs(t.app, auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  otherAuth = (await signUp(t.app, 'undo-other@test.test')).auth;
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `undo_${side}_${suffix}`);
    urls[side] = databaseUrl(`undo_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) values ('ada@example.com', 'Ada'), ('alan@example.com', 'Alan'), ('grace@example.com', 'Grace')`,
  );
  const core = await setUpPeopleSync(api, urls, { name: 'Undo', conflictWinnerSide: 'left' });
  coreBaseId = core.id;
  await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
  await until(async () => (await people('right')).length === 3, 'first sync');
  await until(idle, 'idle after the first sync');
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('undo a run of a PostgreSQL <-> PostgreSQL sync', () => {
  let undoneRun = '';

  it('undoes a run that updated, created and deleted records exactly: both databases as they were before it, row by row', async () => {
    const before = await both();
    expect(before.left).toEqual(before.right);
    const since = new Date();
    // One transaction: one run reads all three edits and writes them to the right side.
    await sql(
      'left',
      `update people set name = 'Ada Lovelace' where email = 'ada@example.com';
       insert into people (email, name) values ('linus@example.com', 'Linus');
       delete from people where email = 'alan@example.com';`,
    );
    await until(async () => {
      const r = await people('right');
      return (
        r.length === 3 && r.some((p) => p.email === 'linus@example.com') && r[0]?.name === 'Ada Lovelace'
      );
    }, 'the run carried the edits');
    await until(idle, 'idle after the run');
    const runs = await runThatWrote('delete', since);
    expect(runs).toHaveLength(1);
    undoneRun = runs[0] as string;
    expect(await runThatWrote('create', since)).toEqual([undoneRun]);
    expect(await runThatWrote('update', since)).toEqual([undoneRun]);

    const { undoRunId } = await api('POST', `/rest/sync-logs/${undoneRun}/undo`);
    const undo = await undone(undoRunId);
    expect(undo).toMatchObject({ status: 'done', trigger: 'undo', undoOf: undoneRun, error: null });
    expect(undo.progress).toEqual({ done: 3, total: 3 });
    expect(
      undo.undoResults.map((r: { operation: string; outcome: string }) => [r.operation, r.outcome]).sort(),
    ).toEqual([
      ['create', 'restored'],
      ['delete', 'restored'],
      ['update', 'restored'],
    ]);
    // Both apps as they were before the run, row by row.
    expect(await both()).toEqual(before);
    // The undo is a run of its own: its writes in both apps are its operations.
    const ops = (undo.entries.items as { side: string; operation: string }[]).map(
      (e) => `${e.operation} ${e.side}`,
    );
    expect(ops.sort()).toEqual([
      'create left',
      'create right',
      'delete left',
      'delete right',
      'update left',
      'update right',
    ]);
    expect((await api('GET', `/rest/sync-logs/${undoneRun}`)).undoneBy).toBe(undoRunId);
    // And the pair is in step: a later edit still syncs both ways.
    await sql('right', `update people set name = 'Alan M. Turing' where email = 'alan@example.com'`);
    await until(
      async () => (await people('left')).some((p) => p.name === 'Alan M. Turing'),
      'the recreated pair syncs',
    );
  }, 120_000);

  it('holds a record edited after the run: its issue is open and its value kept, not overwritten', async () => {
    await until(idle, 'idle');
    const since = new Date();
    await sql('left', `update people set name = 'Grace Hopper' where email = 'grace@example.com'`);
    await until(
      async () => (await people('right')).some((p) => p.name === 'Grace Hopper'),
      'the run carried the edit',
    );
    await until(idle, 'idle after the run');
    const [run] = await runThatWrote('update', since);
    // Edited after the run, in the app the run wrote to (and carried to the other one).
    await sql('right', `update people set name = 'Amazing Grace' where email = 'grace@example.com'`);
    await until(
      async () => (await people('left')).some((p) => p.name === 'Amazing Grace'),
      'the later edit synced',
    );
    await until(idle, 'idle after the edit');

    const { undoRunId } = await api('POST', `/rest/sync-logs/${run}/undo`);
    const undo = await undone(undoRunId);
    expect(undo.status).toBe('done');
    expect(undo.undoResults).toEqual([
      expect.objectContaining({ operation: 'update', side: 'right', outcome: 'held' }),
    ]);
    expect(undo.counts).toMatchObject({ held: 1 });
    const grace = await both();
    expect(grace.right.find((p) => p.email === 'grace@example.com')?.name).toBe('Amazing Grace');
    expect(grace.left.find((p) => p.email === 'grace@example.com')?.name).toBe('Amazing Grace');
    const rightId = String(
      (await sql('right', `select id from people where email = 'grace@example.com'`))[0]?.id,
    );
    const issues = await t.ctx.db
      .selectFrom('sync_error')
      .selectAll()
      .where('core_base_id', '=', coreBaseId)
      .where('code', '=', 'undo_held')
      .execute();
    expect(issues).toEqual([expect.objectContaining({ status: 'open', side: 'right', remote_id: rightId })]);
    expect(issues[0]?.details).toMatchObject({
      undoneRunId: run,
      recordName: 'grace@example.com',
      fields: [{ field: 'name', expected: 'Grace Hopper', now: 'Amazing Grace' }],
    });
  }, 120_000);

  it('refuses a second undo of the same run with 409 in the envelope', async () => {
    expect(undoneRun).not.toBe('');
    const res = await post(`/rest/sync-logs/${undoneRun}/undo`, auth);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      statusCode: 409,
      response: { userFacingMessage: expect.stringContaining('already been undone') },
    });
    const undos = await t.ctx.db
      .selectFrom('sync_log')
      .select('id')
      .where('undo_of', '=', undoneRun)
      .execute();
    expect(undos).toHaveLength(1);
  });

  it('holds a new sync run back while an undo of the sync is under way, and runs it after', async () => {
    await until(idle, 'idle');
    const run = await runNotUndone();
    // An undo under way (as POST .../undo leaves it until its job starts).
    const undo = await t.ctx.db
      .insertInto('sync_log')
      .values({
        owner_id: (
          await t.ctx.db
            .selectFrom('core_base')
            .select('owner_id')
            .where('id', '=', coreBaseId)
            .executeTakeFirstOrThrow()
        ).owner_id,
        core_base_id: coreBaseId,
        trigger: 'undo',
        counts: '{}',
        undo_of: run,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const runs = async () =>
      (
        await t.ctx.db
          .selectFrom('sync_log')
          .select('id')
          .where('core_base_id', '=', coreBaseId)
          .where('undo_of', 'is', null)
          .execute()
      ).length;
    const before = await runs();
    await sql('left', `update people set name = 'Ada L.' where email = 'ada@example.com'`);
    await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await runs()).toBe(before);
    expect((await people('right')).find((p) => p.email === 'ada@example.com')?.name).toBe('Ada');
    await t.ctx.db
      .updateTable('sync_log')
      .set({ status: 'done', finished_at: new Date() })
      .where('id', '=', undo.id)
      .execute();
    await until(
      async () => (await people('right')).find((p) => p.email === 'ada@example.com')?.name === 'Ada L.',
      'the run after the undo',
    );
  }, 60_000);

  it('answers 404 to another user, and queues nothing', async () => {
    const run = await runNotUndone();
    const before = await t.ctx.db.selectFrom('sync_log').select('id').where('trigger', '=', 'undo').execute();
    const res = await post(`/rest/sync-logs/${run}/undo`, otherAuth);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404 });
    expect(
      await t.ctx.db.selectFrom('sync_log').select('id').where('trigger', '=', 'undo').execute(),
    ).toEqual(before);
  });
});
