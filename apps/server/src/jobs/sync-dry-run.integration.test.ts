import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { requestDryRun, SYNC_DRY_RUN } from './sync-dry-run';
import { handleSyncRun, type SyncRunner } from './sync-run';

// Dry-run mode in the run plumbing, on the real pg-boss and PostgreSQL with a scripted runner: a
// wake-up of a sync in dry-run mode queues a dry pass instead of running, and stops a run it comes
// in the middle of; a burst of requests makes one pass.
let t: TestApp;
let userId: string;

beforeAll(async () => {
  // No workers: the test looks at the queues as they are.
  t = await createTestApp({}, { runWorkers: false });
  userId = (await signUp(t.app, 'dry-runs@jobs.test')).userId;
});
afterAll(async () => t.close());

const newBase = async (dryRun: boolean) =>
  (
    await t.ctx.db
      .insertInto('core_base')
      .values({ owner_id: userId, config_extras: '{}', sync_state: 'on', dry_run: dryRun })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;

const runner = () => {
  const calls: string[] = [];
  const r: SyncRunner = {
    async runChunk({ trigger }) {
      calls.push(trigger);
      return { result: 'done' };
    },
  };
  return { runner: r, calls };
};
const dryJobs = async (coreBaseId: string) =>
  (
    await t.ctx.pool.query(
      `select id from pgboss.job where name = $1 and singleton_key = $2 and state = 'created'`,
      [SYNC_DRY_RUN, coreBaseId],
    )
  ).rows;
const passes = (coreBaseId: string) =>
  t.ctx.db
    .selectFrom('dry_run')
    .select(['status', 'trigger'])
    .where('core_base_id', '=', coreBaseId)
    .execute();

describe('dry-run mode in the run plumbing', () => {
  it('turns a wake-up into a queued dry pass, and cancels a run it comes in the middle of', async () => {
    const id = await newBase(true);
    const running = await t.ctx.db
      .insertInto('sync_log')
      .values({ owner_id: userId, core_base_id: id, trigger: 'webhook', counts: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { runner: r, calls } = runner();
    expect(await handleSyncRun(t.ctx.db, t.ctx.boss, r, { coreBaseId: id, trigger: 'webhook' })).toBe('done');
    expect(calls).toEqual([]);
    expect(await passes(id)).toEqual([{ status: 'queued', trigger: 'webhook' }]);
    expect(await dryJobs(id)).toHaveLength(1);
    const log = await t.ctx.db
      .selectFrom('sync_log')
      .select(['status', 'error'])
      .where('id', '=', running.id)
      .executeTakeFirstOrThrow();
    expect(log.status).toBe('cancelled');
    expect(log.error).toMatch(/Dry-run mode was switched on/);
    // No run is logged for a wake-up that planned instead.
    expect(
      await t.ctx.db.selectFrom('sync_log').select('id').where('core_base_id', '=', id).execute(),
    ).toHaveLength(1);
  });

  it('runs as usual with the mode off, and for applying a preview whatever the mode', async () => {
    const off = await newBase(false);
    const a = runner();
    await handleSyncRun(t.ctx.db, t.ctx.boss, a.runner, { coreBaseId: off, trigger: 'schedule' });
    expect(a.calls).toEqual(['schedule']);
    expect(await passes(off)).toEqual([]);
    const on = await newBase(true);
    const b = runner();
    await handleSyncRun(t.ctx.db, t.ctx.boss, b.runner, { coreBaseId: on, trigger: 'preview' });
    expect(b.calls).toEqual(['preview']);
    expect(await passes(on)).toEqual([]);
  });

  it('makes one pass of a burst of requests', async () => {
    const id = await newBase(true);
    const first = await requestDryRun(t.ctx.db, t.ctx.boss, id, 'user');
    const second = await requestDryRun(t.ctx.db, t.ctx.boss, id, 'schedule');
    expect(second).toBe(first);
    expect(await passes(id)).toEqual([{ status: 'queued', trigger: 'user' }]);
    expect(await dryJobs(id)).toHaveLength(1);
  });
});
