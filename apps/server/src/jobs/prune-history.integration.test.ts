import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { type Db, runMigrations } from '../db/database';
import { migrations } from '../db/migrations/index';
import { runStatesQuery, syncStatuses } from '../services/core-bases';
import { assignPlan } from '../services/subscriptions';
import { syncLogsPage } from '../services/sync-logs';
import { PRUNE_HISTORY, pruneHistory } from './prune-history';
import { FINISHED_JOB_RETENTION_SECONDS } from './queue';

// History retention: runs with their operations, trace events and resolved issues older than the
// owner's plan keeps are pruned; what a sync's status is derived from stays. And the lists of
// history read their indexes instead of every user's rows.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
});
afterAll(async () => t.close());

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date();
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

async function newSync(ownerId: string) {
  return (
    await t.ctx.db
      .insertInto('core_base')
      .values({
        owner_id: ownerId,
        config_extras: '{}',
        sync_state: 'on',
        sync_state_changed_at: ago(400),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

/** A run started `days` ago with three operations, and a trace event of its own. */
async function seedRun(
  ownerId: string,
  coreBaseId: string,
  days: number,
  status: 'done' | 'failed' | 'running' = 'done',
) {
  const db = t.ctx.db;
  const { id } = await db
    .insertInto('sync_log')
    .values({
      owner_id: ownerId,
      core_base_id: coreBaseId,
      trigger: `age-${days}`,
      status,
      counts: '{}',
      started_at: ago(days),
      finished_at: status === 'running' ? null : ago(days),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('sync_log_entry')
    .values(
      [0, 1, 2].map((i) => ({
        owner_id: ownerId,
        sync_log_id: id,
        core_base_id: coreBaseId,
        side: 'left' as const,
        operation: 'update' as const,
        remote_id: `r${i}`,
        after: JSON.stringify({ i }),
        created_at: ago(days),
      })),
    )
    .execute();
  await db
    .insertInto('trace_log')
    .values({
      owner_id: ownerId,
      core_base_id: coreBaseId,
      trace_id: id,
      event: `run.age-${days}`,
      data: '{}',
      created_at: ago(days),
    })
    .execute();
  return id;
}

async function seedIssue(ownerId: string, coreBaseId: string, days: number, status: 'open' | 'resolved') {
  await t.ctx.db
    .insertInto('sync_error')
    .values({
      owner_id: ownerId,
      core_base_id: coreBaseId,
      code: `age-${days}-${status}`,
      message: 'x',
      user_facing_message: 'x',
      details: '{}',
      status,
      created_at: ago(days),
      updated_at: ago(days),
    })
    .execute();
}

async function history(coreBaseId: string) {
  const db = t.ctx.db;
  const runs = await db
    .selectFrom('sync_log')
    .select(['trigger', 'status'])
    .where('core_base_id', '=', coreBaseId)
    .orderBy('started_at')
    .execute();
  const entries = await db
    .selectFrom('sync_log_entry as e')
    .innerJoin('sync_log as l', 'l.id', 'e.sync_log_id')
    .select('l.trigger')
    .where('e.core_base_id', '=', coreBaseId)
    .execute();
  const traces = await db
    .selectFrom('trace_log')
    .select('event')
    .where('core_base_id', '=', coreBaseId)
    .orderBy('created_at')
    .execute();
  const issues = await db
    .selectFrom('sync_error')
    .select('code')
    .where('core_base_id', '=', coreBaseId)
    .orderBy('created_at')
    .execute();
  const entriesPerRun: Record<string, number> = {};
  for (const e of entries) entriesPerRun[e.trigger] = (entriesPerRun[e.trigger] ?? 0) + 1;
  return {
    runs: runs.map((r) => r.trigger),
    entriesPerRun,
    traces: traces.map((r) => r.event.replace('run.', '')),
    issues: issues.map((r) => r.code),
  };
}

describe('history retention', () => {
  it('prunes each user by their plan, in batches, never a running run nor open issues', async () => {
    const free = await signUp(t.app, 'retention-free@test.test'); // no plan: 7 days
    const pro = await signUp(t.app, 'retention-pro@test.test'); // pro: 90 days
    await assignPlan(t.ctx.db, pro.userId, 'pro', { days: null, status: 'active' });
    const freeSync = await newSync(free.userId);
    const proSync = await newSync(pro.userId);
    for (const [user, sync] of [
      [free.userId, freeSync],
      [pro.userId, proSync],
    ] as const) {
      await seedRun(user, sync, 200, 'running'); // a run that never ended: kept with its operations
      for (const days of [120, 60, 20]) await seedRun(user, sync, days);
      await seedRun(user, sync, 2);
      await seedIssue(user, sync, 120, 'open');
      await seedIssue(user, sync, 120, 'resolved');
      await seedIssue(user, sync, 20, 'resolved');
      await seedIssue(user, sync, 2, 'resolved');
    }
    const statusBefore = await syncStatuses(
      t.ctx.db,
      await t.ctx.db.selectFrom('core_base').selectAll().where('id', 'in', [freeSync, proSync]).execute(),
    );

    // Batches of 2 rows: every delete loops (3 operations a run).
    const result = await pruneHistory(t.ctx.db, { localDevPlan: false, now: NOW, batchRows: 2 });

    expect(await history(freeSync)).toEqual({
      runs: ['age-200', 'age-2'],
      entriesPerRun: { 'age-200': 3, 'age-2': 3 },
      traces: ['age-2'],
      issues: ['age-120-open', 'age-2-resolved'],
    });
    expect(await history(proSync)).toEqual({
      runs: ['age-200', 'age-60', 'age-20', 'age-2'],
      entriesPerRun: { 'age-200': 3, 'age-60': 3, 'age-20': 3, 'age-2': 3 },
      traces: ['age-60', 'age-20', 'age-2'],
      issues: ['age-120-open', 'age-20-resolved', 'age-2-resolved'],
    });
    // The running run's own trace event is history like any other (trace events have no run).
    expect(result).toEqual({ runs: 4, entries: 12, traces: 6, issues: 3 });
    const statusAfter = await syncStatuses(
      t.ctx.db,
      await t.ctx.db.selectFrom('core_base').selectAll().where('id', 'in', [freeSync, proSync]).execute(),
    );
    expect(statusAfter).toEqual(statusBefore);

    // Nothing more to do on a second pass.
    expect(await pruneHistory(t.ctx.db, { localDevPlan: false, now: NOW })).toEqual({
      runs: 0,
      entries: 0,
      traces: 0,
      issues: 0,
    });
  });

  it('keeps the newest run and newest completed run of a sync (its status), without their old operations', async () => {
    const user = await signUp(t.app, 'retention-idle@test.test');
    const sync = await newSync(user.userId);
    await seedRun(user.userId, sync, 40);
    await seedRun(user.userId, sync, 30);
    await seedRun(user.userId, sync, 10, 'failed');
    const row = await t.ctx.db
      .selectFrom('core_base')
      .selectAll()
      .where('id', '=', sync)
      .executeTakeFirstOrThrow();
    const before = await syncStatuses(t.ctx.db, [row]);
    expect(before[0]?.label).toBe('Active');

    await pruneHistory(t.ctx.db, { localDevPlan: false, now: NOW });

    expect(await history(sync)).toEqual({
      runs: ['age-30', 'age-10'],
      entriesPerRun: {},
      traces: [],
      issues: [],
    });
    expect(await syncStatuses(t.ctx.db, [row])).toEqual(before);
  });

  it('uses the dev plan on a local server and LOCKSTEP_HISTORY_RETENTION_DAYS for everyone', async () => {
    const user = await signUp(t.app, 'retention-dev@test.test');
    const sync = await newSync(user.userId);
    for (const days of [40, 20, 5, 1]) await seedRun(user.userId, sync, days);
    await pruneHistory(t.ctx.db, { localDevPlan: true, now: NOW }); // dev plan: 30 days
    expect((await history(sync)).runs).toEqual(['age-20', 'age-5', 'age-1']);
    await pruneHistory(t.ctx.db, { localDevPlan: true, retentionDays: 3, now: NOW });
    expect((await history(sync)).runs).toEqual(['age-1']);
  });

  it('schedules the pruning hourly and keeps finished jobs a day at most', async () => {
    const schedules = await t.ctx.boss.getSchedules();
    expect(schedules.find((s) => s.name === PRUNE_HISTORY)?.cron).toBe('23 * * * *');
    const queues = await t.ctx.boss.getQueues();
    expect(queues.length).toBeGreaterThan(5);
    for (const q of queues) {
      expect(q.deleteAfterSeconds, q.name).toBeGreaterThan(0);
      expect(q.deleteAfterSeconds, q.name).toBeLessThanOrEqual(FINISHED_JOB_RETENTION_SECONDS);
    }
  });
});

/** The plan of a query as EXPLAIN (format json) gives it: every node, flattened. */
async function planOf(db: Db, query: { compile(): CompiledQuery }) {
  const c = query.compile();
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    CompiledQuery.raw(`explain (format json) ${c.sql}`, [...c.parameters]),
  );
  const nodes: PlanNode[] = [];
  const walk = (n: PlanNode) => {
    nodes.push(n);
    for (const child of n.Plans ?? []) walk(child);
  };
  walk((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
  return nodes;
}
type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };

describe('history lists read their indexes', () => {
  it("lists a user's runs through the owner index while another user has thousands", async () => {
    const db = t.ctx.db;
    const busy = await signUp(t.app, 'explain-busy@test.test');
    const quiet = await signUp(t.app, 'explain-quiet@test.test');
    const busySync = await newSync(busy.userId);
    await sql`insert into sync_log (owner_id, core_base_id, trigger, status, counts, started_at, finished_at)
      select ${busy.userId}, ${busySync}::uuid, 'schedule', 'done', '{}'::jsonb,
             now() - make_interval(secs => g), now() - make_interval(secs => g)
      from generate_series(1, 20000) g`.execute(db);
    await sql`analyze sync_log`.execute(db);

    const plan = await planOf(db, syncLogsPage(db, { ownerId: quiet.userId }, 0, 50));
    expect(plan.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'sync_log')).toBe(false);
    expect(plan.map((n) => n['Index Name'])).toContain('sync_log_owner_idx');

    const statuses = await planOf(db, runStatesQuery(db, [busySync]));
    expect(statuses.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'sync_log')).toBe(
      false,
    );
    expect(statuses.some((n) => n['Node Type'] === 'Aggregate')).toBe(false);
    const [status] = await syncStatuses(
      db,
      await db.selectFrom('core_base').selectAll().where('id', '=', busySync).execute(),
    );
    expect(status).toMatchObject({ label: 'Active', running: false });
  });
});

describe('migrations', () => {
  it('runs a lower-numbered migration that arrives after a higher one ran', async () => {
    const db = t.ctx.db;
    await runMigrations(db, {
      ...migrations,
      '0008-arrives-late': {
        up: async (d) => {
          await sql`create table arrived_late (id int)`.execute(d);
        },
      },
    });
    const ran = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    expect(ran.rows.map((r) => r.name)).toEqual(
      expect.arrayContaining(['0008-arrives-late', '0009-history-retention']),
    );
    const { rows } = await sql<{ t: string | null }>`select to_regclass('arrived_late')::text as t`.execute(
      db,
    );
    expect(rows[0]?.t).toBe('arrived_late');
  });
});
