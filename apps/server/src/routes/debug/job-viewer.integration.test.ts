import { NIL_ID } from '@lockstep/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { SYNC_PREVIEW_STEP } from '../../jobs/preview-step-queue';
import { SYNC_RUN } from '../../jobs/sync-run';

// Issue 23 items 1 and 3: the job viewer, staff previews for a user, the preview's debug and error
// listings, and the records debug lookup. Workers are off, so the jobs sent here stay as sent.
let t: TestApp;
let staff: Awaited<ReturnType<typeof signUp>>;
let owner: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
/** The owner's sync, its two apps (left, right), their tables and the table pair. */
const sync = { id: '', left: '', right: '', leftTable: '', rightTable: '', mapping: '' };

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_STAFF_EMAILS: 'ops-jobs@lockstep.test' }, { runWorkers: false });
  staff = await signUp(t.app, 'ops-jobs@lockstep.test', 'Olga Ops');
  owner = await signUp(t.app, 'owner-jobs@example.test');
  other = await signUp(t.app, 'other-jobs@example.test');
  for (const u of [owner, other])
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...u.auth, ...json },
      payload: { productType: 'enterprise' },
    });
  const db = t.ctx.db;
  sync.id = (
    await t.app.inject({
      method: 'POST',
      url: '/rest/core-bases',
      headers: { ...owner.auth, ...json },
      payload: { name: 'Jobs' },
    })
  ).json().id;
  for (const side of ['left', 'right'] as const) {
    const base = await db
      .insertInto('external_base')
      .values({
        owner_id: owner.userId,
        core_base_id: sync.id,
        external_connection_id: null,
        type: 'memory',
        name: side,
        remote_id: side,
        side,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const table = await db
      .insertInto('external_table')
      .values({
        owner_id: owner.userId,
        external_base_id: base.id,
        remote_id: side,
        name: side,
        extras: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    sync[side] = base.id;
    sync[side === 'left' ? 'leftTable' : 'rightTable'] = table.id;
  }
  sync.mapping = (
    await db
      .insertInto('table_mapping')
      .values({
        owner_id: owner.userId,
        core_base_id: sync.id,
        left_table_id: sync.leftTable,
        right_table_id: sync.rightTable,
        filter: null,
        match_on_field_id: null,
        match_on_secondary_field_id: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
});
afterAll(async () => t?.close());

const get = (url: string, auth: Record<string, string>) => t.app.inject({ url, headers: auth });
const post = (url: string, auth: Record<string, string>, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload });
const later = { startAfter: 3600 };

describe('the job viewer', () => {
  let runJob: string;
  let failedJob: string;
  beforeAll(async () => {
    runJob = (await t.ctx.boss.send(
      SYNC_RUN,
      { coreBaseId: sync.id, trigger: 'test' },
      { ...later, singletonKey: sync.id },
    )) as string;
    // A job that failed: its error is kept in the job's output, with its retries spent.
    failedJob = (await t.ctx.boss.send(
      'refresh-app-webhooks',
      { coreBaseId: sync.id },
      { retryLimit: 0 },
    )) as string;
    await t.ctx.db
      .updateTable('pgboss.job' as never)
      .set({
        state: 'failed',
        started_on: new Date(Date.now() - 1500),
        completed_on: new Date(),
        output: JSON.stringify({ message: 'The app refused the webhook' }),
      } as never)
      .where('id' as never, '=', failedJob as never)
      .execute();
    // Someone else's sync's job: never listed with this one.
    await t.ctx.boss.send(SYNC_RUN, { coreBaseId: NIL_ID.replace(/0$/, '1'), trigger: 'test' }, later);
  });

  it("lists one sync's jobs to its owner, by either of its apps, with data, attempts, errors and timing", async () => {
    const res = await get(`/rest/debug/jobs?externalBaseId=${sync.right}`, owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ coreBaseId: sync.id, total: 2, skip: 0, take: 50 });
    expect(body.byState).toMatchObject({ created: 1, failed: 1, active: 0 });
    const run = body.items.find((j: { id: string }) => j.id === runJob);
    expect(run).toMatchObject({
      name: SYNC_RUN,
      state: 'created',
      data: { coreBaseId: sync.id, trigger: 'test' },
      singletonKey: sync.id,
      startedOn: null,
      durationMs: null,
    });
    const failed = body.items.find((j: { id: string }) => j.id === failedJob);
    expect(failed).toMatchObject({
      name: 'refresh-app-webhooks',
      state: 'failed',
      retryCount: 0,
      retryLimit: 0,
      output: { message: 'The app refused the webhook' },
    });
    expect(failed.durationMs).toBeGreaterThanOrEqual(1400);
    expect(failed.durationMs).toBeLessThan(5000);
    // Newest first.
    expect(body.items.map((j: { id: string }) => j.id)).toEqual([failedJob, runJob]);
  });

  it('filters by state and pages', async () => {
    const failed = (
      await get(`/rest/debug/jobs?externalBaseId=${sync.left}&state=failed`, owner.auth)
    ).json();
    expect(failed.items.map((j: { id: string }) => j.id)).toEqual([failedJob]);
    expect(failed.total).toBe(1);
    const page = (await get(`/rest/debug/jobs?externalBaseId=${sync.left}&skip=1&take=1`, staff.auth)).json();
    expect(page).toMatchObject({ total: 2, skip: 1, take: 1 });
    expect(page.items.map((j: { id: string }) => j.id)).toEqual([runJob]);
  });

  it("lists a preview's steps and schema generation as the sync's jobs too", async () => {
    const preview = await t.ctx.db
      .insertInto('sync_preview')
      .values({ owner_id: owner.userId, core_base_id: sync.id, core_table_ids: '[]', summary: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const step = await t.ctx.boss.send(SYNC_PREVIEW_STEP, { previewId: preview.id, step: 'plan' }, later);
    const schema = await t.ctx.boss.send('generate-schema', { externalBaseId: sync.left }, later);
    const ids = (await get(`/rest/debug/jobs?externalBaseId=${sync.left}`, owner.auth))
      .json()
      .items.map((j: { id: string }) => j.id);
    expect(ids).toEqual(expect.arrayContaining([step, schema]));
    await t.ctx.boss.deleteJob(SYNC_PREVIEW_STEP, step as string);
    await t.ctx.boss.deleteJob('generate-schema', schema as string);
  });

  it("shows staff any sync's jobs, and the jobs of no sync with the nil id", async () => {
    expect((await get(`/rest/debug/jobs?externalBaseId=${sync.left}`, staff.auth)).json().total).toBe(2);
    const loose = await t.ctx.boss.send('prune-history', {}, later);
    const none = await get(`/rest/debug/jobs?externalBaseId=${NIL_ID}`, staff.auth);
    expect(none.statusCode).toBe(200);
    const ids = none.json().items.map((j: { id: string }) => j.id);
    expect(ids).toContain(loose);
    expect(ids).not.toContain(runJob);
    expect(none.json().coreBaseId).toBe(NIL_ID);
    expect((await get(`/rest/debug/jobs?externalBaseId=${NIL_ID}`, owner.auth)).statusCode).toBe(403);
  });

  it("answers 404 for another user's app and 400 in the envelope for bad input", async () => {
    const theirs = await get(`/rest/debug/jobs?externalBaseId=${sync.left}`, other.auth);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().response.userFacingMessage).toMatch(/not found/);
    for (const query of ['externalBaseId=nope', `externalBaseId=${sync.left}&state=sleeping`, 'take=5']) {
      const bad = await get(`/rest/debug/jobs?${query}`, owner.auth);
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json()).toMatchObject({ statusCode: 400, path: expect.any(String) });
    }
  });
});

describe('staff previews and their debug views', () => {
  let previewId: string;

  it("starts a preview of a user's sync for staff, recording who asked; users are refused", async () => {
    const refused = await post('/rest/sync-preview/internal', owner.auth, { coreBaseId: sync.id });
    expect(refused.statusCode).toBe(403);
    const res = await post('/rest/sync-preview/internal', staff.auth, { coreBaseId: sync.id });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      coreBaseId: sync.id,
      status: 'downloading',
      ownerId: owner.userId,
      requestedBy: staff.userId,
    });
    previewId = body.id;
    const row = await t.ctx.db
      .selectFrom('sync_preview')
      .select(['owner_id', 'requested_by'])
      .where('id', '=', previewId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ owner_id: owner.userId, requested_by: staff.userId });
    // The owner sees it as their own preview, with its download queued as theirs would be.
    expect((await get(`/rest/sync-preview/${previewId}`, owner.auth)).statusCode).toBe(200);
    const steps = (await get(`/rest/debug/jobs?externalBaseId=${sync.left}`, owner.auth))
      .json()
      .items.filter((j: { name: string }) => j.name === SYNC_PREVIEW_STEP);
    expect(steps.map((j: { data: unknown }) => j.data)).toEqual([{ previewId, step: 'download' }]);
  });

  it('refuses a preview of an unknown sync, or of table pairs not its own, in the envelope', async () => {
    const unknown = await post('/rest/sync-preview/internal', staff.auth, { coreBaseId: NIL_ID });
    expect(unknown.statusCode).toBe(404);
    const pairs = await post('/rest/sync-preview/internal', staff.auth, {
      coreBaseId: sync.id,
      coreTableIds: [NIL_ID],
    });
    expect(pairs.statusCode).toBe(400);
    expect(pairs.json().response.userFacingMessage).toMatch(/not table mappings of this sync/);
    const bad = await post('/rest/sync-preview/internal', staff.auth, { coreBaseId: 'x', extra: 1 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().statusCode).toBe(400);
  });

  it("shows a preview's internals, problems and step jobs to staff only", async () => {
    await t.ctx.db
      .insertInto('sync_preview_problem')
      .values({
        sync_preview_id: previewId,
        table_mapping_id: sync.mapping,
        kind: 'duplicate',
        message: 'Two records share a key',
        details: '{}',
      })
      .execute();
    await t.ctx.db
      .insertInto('sync_preview_record')
      .values({
        sync_preview_id: previewId,
        external_table_id: sync.leftTable,
        side: 'left',
        remote_id: 'r1',
        fields: '{}',
        match_key: null,
        plan: 'create',
        changes: null,
      })
      .execute();
    expect((await get(`/rest/sync-preview/${previewId}/debug`, owner.auth)).statusCode).toBe(403);
    const res = await get(`/rest/sync-preview/${previewId}/debug`, staff.auth);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.preview).toMatchObject({ id: previewId, requestedBy: staff.userId, ownerId: owner.userId });
    expect(body.tracker).toMatchObject({ status: expect.any(String) });
    expect(body.recordsBySide).toEqual([{ key: 'left', n: 1 }]);
    expect(body.recordsByPlan).toEqual([{ key: 'create', n: 1 }]);
    expect(body.problemsByKind).toEqual([{ key: 'duplicate', n: 1 }]);
    expect(body.jobs.map((j: { data: unknown }) => j.data)).toEqual([{ previewId, step: 'download' }]);
    expect((await get(`/rest/sync-preview/${NIL_ID}/debug`, staff.auth)).statusCode).toBe(404);
    expect((await get('/rest/sync-preview/nope/debug', staff.auth)).statusCode).toBe(400);
  });

  it("lists a preview's sync errors: its sync's issues since it started and its failed step jobs", async () => {
    const issue = (created_at: Date, message: string) =>
      t.ctx.db
        .insertInto('sync_error')
        .values({
          owner_id: owner.userId,
          core_base_id: sync.id,
          code: 'validation',
          message,
          user_facing_message: message,
          details: '{}',
          created_at,
          updated_at: created_at,
        })
        .execute();
    await issue(new Date(Date.now() - 86_400_000), 'Before the preview');
    await issue(new Date(Date.now() + 1000), 'During the preview');
    await sql`update pgboss.job set state = 'failed', output = ${JSON.stringify({ message: 'download broke' })}::jsonb
      where data->>'previewId' = ${previewId}`.execute(t.ctx.db);

    expect((await get(`/rest/sync-errors/${previewId}/sync-errors`, owner.auth)).statusCode).toBe(403);
    const res = await get(`/rest/sync-errors/${previewId}/sync-errors`, staff.auth);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.items.map((i: { message: string }) => i.message)).toEqual(['During the preview']);
    expect(body).toMatchObject({ total: 1, previewId });
    expect(body.jobErrors).toEqual([
      expect.objectContaining({ step: 'download', state: 'failed', error: { message: 'download broke' } }),
    ]);
    expect((await get(`/rest/sync-errors/${NIL_ID}/sync-errors`, staff.auth)).statusCode).toBe(404);
    expect((await get(`/rest/sync-errors/${previewId}/sync-errors?take=0`, staff.auth)).statusCode).toBe(400);
  });
});

describe('the records debug lookup', () => {
  it("finds the linked record of an app's record id, with its issues, for staff only", async () => {
    const link = await t.ctx.db
      .insertInto('core_meta_record')
      .values({
        core_base_id: sync.id,
        owner_id: owner.userId,
        table_mapping_id: sync.mapping,
        left_remote_id: 'L-7',
        right_remote_id: 'R-7',
        shadow: JSON.stringify({ name: 'Ada' }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.ctx.db
      .insertInto('sync_error')
      .values({
        owner_id: owner.userId,
        core_base_id: sync.id,
        side: 'right',
        remote_id: 'R-7',
        code: 'validation',
        message: 'R-7 refused',
        user_facing_message: 'R-7 refused',
        details: '{}',
      })
      .execute();
    const find = (auth: Record<string, string>, body: object) =>
      post('/rest/core-meta-records/debug/find', auth, body);

    expect((await find(owner.auth, { externalBaseId: sync.right, remoteRecordId: 'R-7' })).statusCode).toBe(
      403,
    );
    const res = await find(staff.auth, {
      externalBaseId: sync.right,
      externalTableId: sync.rightTable,
      remoteRecordId: 'R-7',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      coreBaseId: sync.id,
      side: 'right',
      items: [{ id: link.id, leftRemoteId: 'L-7', rightRemoteId: 'R-7' }],
      issues: [{ message: 'R-7 refused' }],
    });
    // The id is looked up on the app's own side only.
    const wrongSide = await find(staff.auth, { externalBaseId: sync.left, remoteRecordId: 'R-7' });
    expect(wrongSide.json().items).toEqual([]);
    // A table of another app of the sync is not this app's.
    const notItsTable = await find(staff.auth, {
      externalBaseId: sync.right,
      externalTableId: sync.leftTable,
      remoteRecordId: 'R-7',
    });
    expect(notItsTable.statusCode).toBe(404);
    expect((await find(staff.auth, { externalBaseId: NIL_ID, remoteRecordId: 'R-7' })).statusCode).toBe(404);
    const bad = await find(staff.auth, { externalBaseId: sync.right, remoteRecordId: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().statusCode).toBe(400);
  });
});
