import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { findStuckRuns, reapStuckSyncs, STUCK_AFTER_MS } from './reap-stuck-syncs';
import { scheduleDueSyncs } from './schedule-due-syncs';
import {
  type ChunkResult,
  handleSyncRun,
  PRIORITY,
  requestSyncRun,
  SYNC_RUN,
  type SyncRunner,
} from './sync-run';

// The run plumbing on the real pg-boss and PostgreSQL: queueing per core base, chunks that
// continue one sync log, resuming after a crash, the reaper and the poll schedule. The runner here
// is scripted (the engine-backed runner has its own tests); the queue and database are real.
let t: TestApp;
let userId: string;

beforeAll(async () => {
  // No workers: the tests drive each chunk themselves and look at the queue as it is.
  t = await createTestApp({}, { runWorkers: false });
  const u = await signUp(t.app, 'runs@jobs.test');
  userId = u.userId;
  await t.ctx.db
    .insertInto('subscription')
    .values({ user_id: userId, product_type: 'pro', status: 'active' })
    .execute();
});
afterAll(async () => t.close());

async function newBase(on = true) {
  return (
    await t.ctx.db
      .insertInto('core_base')
      .values({ owner_id: userId, config_extras: '{}', sync_state: on ? 'on' : 'off' })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

const scripted = (results: ChunkResult[]) => {
  const calls: string[] = [];
  const runner: SyncRunner = {
    async runChunk({ syncLogId }) {
      calls.push(syncLogId);
      return { result: results.shift() ?? 'done' };
    },
  };
  return { runner, calls };
};

const queued = async (coreBaseId: string) =>
  (
    await t.ctx.pool.query(
      `select priority from pgboss.job where name = $1 and singleton_key = $2 and state = 'created'`,
      [SYNC_RUN, coreBaseId],
    )
  ).rows as { priority: number }[];

describe('sync-run jobs', () => {
  it('collapses a burst of triggers into one queued run per sync, raising its priority', async () => {
    const id = await newBase();
    expect(await requestSyncRun(t.ctx.boss, id, 'schedule')).not.toBeNull();
    expect(await requestSyncRun(t.ctx.boss, id, 'schedule')).toBeNull();
    await requestSyncRun(t.ctx.boss, id, 'webhook', PRIORITY.webhook);
    const jobs = await queued(id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.priority).toBe(PRIORITY.webhook);
  });

  it('continues one sync log across chunks and finishes it', async () => {
    const id = await newBase();
    const { runner, calls } = scripted(['more_work', 'more_work', 'done']);
    expect(await handleSyncRun(t.ctx.db, t.ctx.boss, runner, { coreBaseId: id, trigger: 'user' })).toBe(
      'more_work',
    );
    expect(await queued(id)).toHaveLength(1);
    expect(await handleSyncRun(t.ctx.db, t.ctx.boss, runner, { coreBaseId: id, trigger: 'user' })).toBe(
      'more_work',
    );
    expect(await handleSyncRun(t.ctx.db, t.ctx.boss, runner, { coreBaseId: id, trigger: 'user' })).toBe(
      'done',
    );
    expect(new Set(calls).size).toBe(1);
    const logs = await t.ctx.db.selectFrom('sync_log').selectAll().where('core_base_id', '=', id).execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]?.status).toBe('done');
    const base = await t.ctx.db
      .selectFrom('core_base')
      .select('last_sync_time')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(base.last_sync_time).not.toBeNull();
  });

  it('resumes the run a dead process left running instead of starting another', async () => {
    const id = await newBase();
    const orphan = await t.ctx.db
      .insertInto('sync_log')
      .values({ owner_id: userId, core_base_id: id, trigger: 'schedule', counts: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { runner, calls } = scripted(['done']);
    await handleSyncRun(t.ctx.db, t.ctx.boss, runner, { coreBaseId: id, trigger: 'schedule' });
    expect(calls).toEqual([orphan.id]);
  });

  it('records a failed run with its error', async () => {
    const id = await newBase();
    const runner: SyncRunner = {
      runChunk: async () => ({ result: 'failed', error: 'The left app refused the credentials.' }),
    };
    await handleSyncRun(t.ctx.db, t.ctx.boss, runner, { coreBaseId: id, trigger: 'user' });
    const log = await t.ctx.db
      .selectFrom('sync_log')
      .selectAll()
      .where('core_base_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ status: 'failed', error: 'The left app refused the credentials.' });
  });

  it('reaps runs stuck past the limit with no job behind them', async () => {
    const id = await newBase(false);
    await t.ctx.db
      .insertInto('sync_log')
      .values({
        owner_id: userId,
        core_base_id: id,
        trigger: 'schedule',
        counts: '{}',
        started_at: new Date(Date.now() - STUCK_AFTER_MS - 60_000),
      })
      .execute();
    expect((await findStuckRuns(t.ctx.db)).map((r) => r.core_base_id)).toContain(id);
    expect(await reapStuckSyncs(t.ctx.db)).toBeGreaterThanOrEqual(1);
    const log = await t.ctx.db
      .selectFrom('sync_log')
      .selectAll()
      .where('core_base_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(log.status).toBe('failed');
    expect(log.error).toMatch(/reaper/);
  });

  it('schedules only syncs that are on and due by their plan interval', async () => {
    const due = await newBase(true);
    const recent = await newBase(true);
    const off = await newBase(false);
    await t.ctx.db
      .updateTable('core_base')
      .set({ last_sync_time: new Date() })
      .where('id', '=', recent)
      .execute();
    await scheduleDueSyncs(t.ctx.db, t.ctx.boss);
    expect(await queued(due)).toHaveLength(1);
    expect(await queued(recent)).toHaveLength(0);
    expect(await queued(off)).toHaveLength(0);
  });
});
