import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { createProgress, updateProgress } from '../../services/progress';

// Sync logs, issues, trace logs and progress as the REST API shows them: paged, filtered, and
// scoped to their owner. The rows are written here the way the runtime writes them.
let t: TestApp;
type User = Awaited<ReturnType<typeof signUp>>;
let owner: User;
let other: User;
let baseId: string;

const get = (url: string, u: User) => t.app.inject({ url, headers: u.auth });
const post = (url: string, u: User) => t.app.inject({ method: 'POST', url, headers: u.auth });

beforeAll(async () => {
  t = await createTestApp();
  owner = await signUp(t.app, 'runs-owner@test.test');
  other = await signUp(t.app, 'runs-other@test.test');
  const db = t.ctx.db;
  baseId = (
    await db
      .insertInto('core_base')
      .values({ owner_id: owner.userId, config_extras: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  for (let i = 0; i < 3; i++) {
    const log = await db
      .insertInto('sync_log')
      .values({
        owner_id: owner.userId,
        core_base_id: baseId,
        trigger: 'schedule',
        status: i === 2 ? 'failed' : 'done',
        counts: JSON.stringify({ created: i }),
        started_at: new Date(Date.UTC(2026, 0, 1 + i)),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('sync_log_entry')
      .values({
        owner_id: owner.userId,
        sync_log_id: log.id,
        core_base_id: baseId,
        side: 'right',
        operation: 'update',
        remote_id: `r${i}`,
        before: JSON.stringify({ name: 'Old' }),
        after: JSON.stringify({ name: `New ${i}` }),
      })
      .execute();
  }
  await db
    .insertInto('sync_error')
    .values([
      {
        owner_id: owner.userId,
        core_base_id: baseId,
        side: 'left',
        code: 'validation',
        message: 'too long',
        user_facing_message: 'The name is too long for Airtable.',
        details: '{}',
      },
      {
        owner_id: owner.userId,
        core_base_id: baseId,
        side: 'right',
        code: 'auth_invalid',
        message: '401',
        user_facing_message: 'Reconnect.',
        details: '{}',
      },
    ])
    .execute();
  const root = await db
    .insertInto('trace_log')
    .values({
      owner_id: owner.userId,
      core_base_id: baseId,
      trace_id: 'trace-1',
      event: 'run.start',
      data: '{}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('trace_log')
    .values({
      owner_id: owner.userId,
      core_base_id: baseId,
      trace_id: 'trace-1',
      parent_id: root.id,
      event: 'read.page',
      data: JSON.stringify({ table: 'contacts', rows: 100 }),
    })
    .execute();
});
afterAll(async () => t.close());

describe('sync logs, issues, trace logs and progress over REST', () => {
  it('pages sync logs newest first and filters them; one log shows its before and after values', async () => {
    const page = (await get(`/rest/sync-logs?coreBaseId=${baseId}&take=2`, owner)).json();
    expect(page.total).toBe(3);
    expect(page.items.map((l: { counts: { created: number } }) => l.counts.created)).toEqual([2, 1]);
    expect((await get('/rest/sync-logs?status=failed', owner)).json().total).toBe(1);
    expect((await get('/rest/sync-logs?from=2026-01-02T00:00:00Z', owner)).json().total).toBe(2);
    const one = (await get(`/rest/sync-logs/${page.items[0].id}`, owner)).json();
    expect(one.entries.items[0]).toMatchObject({
      operation: 'update',
      before: { name: 'Old' },
      after: { name: 'New 2' },
    });
    expect((await get(`/rest/sync-logs/${page.items[0].id}`, other)).statusCode).toBe(404);
    expect((await get(`/rest/sync-logs?coreBaseId=${baseId}`, other)).statusCode).toBe(404);
    expect((await get('/rest/sync-logs', other)).json().total).toBe(0);
  });

  it('lists issues with JSON filters and suggests a fix from the error code', async () => {
    const all = (
      await get(
        `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: baseId }))}`,
        owner,
      )
    ).json();
    expect(all.total).toBe(2);
    const auth = (
      await get(`/rest/sync-errors?filters=${encodeURIComponent('{"code":"auth_invalid"}')}`, owner)
    ).json();
    expect(auth.items).toHaveLength(1);
    const fix = (await post(`/rest/sync-errors/${auth.items[0].id}/suggest-fix`, owner)).json();
    expect(fix).toMatchObject({ source: 'rules', title: 'Reconnect the app' });
    expect(fix.steps.length).toBeGreaterThan(0);
    expect((await post(`/rest/sync-errors/${auth.items[0].id}/suggest-fix`, other)).statusCode).toBe(404);
    const bad = await get(`/rest/sync-errors?filters=${encodeURIComponent('{"colour":1}')}`, owner);
    expect(bad.statusCode).toBe(400);
  });

  it('searches trace logs and nests a trace', async () => {
    const found = (await get(`/rest/trace-log/${baseId}?q=contacts`, owner)).json();
    expect(found.items.map((e: { event: string }) => e.event)).toEqual(['read.page']);
    const trace = (await get(`/rest/trace-log/${baseId}/trace-1?nestEvents=true`, owner)).json();
    expect(trace.events).toHaveLength(1);
    expect(trace.events[0].children[0].event).toBe('read.page');
    expect((await get(`/rest/trace-log/${baseId}/trace-1`, other)).statusCode).toBe(404);
  });

  it('reports progress by tracking id and lets the owner cancel it, once', async () => {
    const { id } = await createProgress(t.ctx.db, owner.userId, 'sync-preview-download', 200);
    await updateProgress(t.ctx.db, id, { status: 'IN_PROGRESS', done: 50 });
    expect((await get(`/rest/progress/${id}`, owner)).json()).toMatchObject({
      status: 'IN_PROGRESS',
      done: 50,
      total: 200,
      percent: 25,
    });
    expect((await get(`/rest/progress/${id}`, other)).statusCode).toBe(404);
    const cancel = await t.app.inject({ method: 'DELETE', url: `/rest/progress/${id}`, headers: owner.auth });
    expect(cancel.json().status).toBe('CANCELLED');
    // A worker's later update does not revive it.
    expect(await updateProgress(t.ctx.db, id, { done: 60 })).toBe(false);
    const again = await t.app.inject({ method: 'DELETE', url: `/rest/progress/${id}`, headers: owner.auth });
    expect(again.statusCode).toBe(409);
  });

  it('exports operations as CSV and JSON with their filters, and deletes an export', async () => {
    const json = { ...owner.auth, 'content-type': 'application/json' };
    const url = `/rest/core-bases/${baseId}/sync-log-exports`;
    const csvExport = await t.app.inject({ method: 'POST', url, headers: json, payload: { format: 'csv' } });
    expect(csvExport.statusCode).toBe(201);
    expect(csvExport.json()).toMatchObject({ format: 'csv', rowCount: 3, status: 'COMPLETED' });
    const csv = await t.app.inject({ url: csvExport.json().downloadPath, headers: owner.auth });
    expect(csv.headers['content-type']).toMatch(/text\/csv/);
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toBe('created_at,sync_log_id,core_meta_record_id,side,operation,remote_id,before,after');
    expect(lines).toHaveLength(4);
    expect(csv.body).toContain('"{""name"":""New 2""}"');

    const filtered = await t.app.inject({
      method: 'POST',
      url,
      headers: json,
      payload: { format: 'json', filters: { operation: 'delete' } },
    });
    expect(filtered.json().rowCount).toBe(0);
    const jsonExport = await t.app.inject({
      method: 'POST',
      url,
      headers: json,
      payload: { format: 'json' },
    });
    const rows = (await t.app.inject({ url: jsonExport.json().downloadPath, headers: owner.auth })).json();
    expect(rows.map((r: { remote_id: string }) => r.remote_id)).toEqual(['r0', 'r1', 'r2']);
    expect(rows[0].after).toEqual({ name: 'New 0' });

    expect((await t.app.inject({ url, headers: owner.auth })).json().items).toHaveLength(3);
    expect(
      (await t.app.inject({ url: jsonExport.json().downloadPath, headers: other.auth })).statusCode,
    ).toBe(404);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `${url}/${jsonExport.json().id}`,
      headers: owner.auth,
    });
    expect(del.json()).toEqual({ deleted: true });
    expect((await t.app.inject({ url, headers: owner.auth })).json().items).toHaveLength(2);
    const bad = await t.app.inject({ method: 'POST', url, headers: json, payload: { format: 'xml' } });
    expect(bad.statusCode).toBe(400);
  });

  it('shows a linked record: status, search and history, to its owner only', async () => {
    const db = t.ctx.db;
    const rec = await db
      .insertInto('core_meta_record')
      .values({
        owner_id: owner.userId,
        core_base_id: baseId,
        left_remote_id: 'L-42',
        right_remote_id: 'R-42',
        shadow: JSON.stringify({ email: 'grace@example.com', name: 'Grace Hopper' }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const log = await db
      .selectFrom('sync_log')
      .select('id')
      .where('core_base_id', '=', baseId)
      .executeTakeFirstOrThrow();
    await db
      .insertInto('sync_log_entry')
      .values([
        {
          owner_id: owner.userId,
          sync_log_id: log.id,
          core_base_id: baseId,
          core_meta_record_id: rec.id,
          side: 'right',
          operation: 'create',
          remote_id: 'R-42',
          after: JSON.stringify({ name: 'Grace' }),
          created_at: new Date('2026-02-01T00:00:00Z'),
        },
        {
          owner_id: owner.userId,
          sync_log_id: log.id,
          core_base_id: baseId,
          core_meta_record_id: rec.id,
          side: 'left',
          operation: 'update',
          remote_id: 'L-42',
          before: JSON.stringify({ name: 'Grace' }),
          after: JSON.stringify({ name: 'Grace Hopper' }),
          created_at: new Date('2026-02-02T00:00:00Z'),
        },
      ])
      .execute();
    await db
      .insertInto('sync_error')
      .values({
        owner_id: owner.userId,
        core_base_id: baseId,
        core_meta_record_id: rec.id,
        side: 'right',
        code: 'validation',
        message: 'x',
        user_facing_message: 'Too long.',
        details: '{}',
      })
      .execute();

    const status = (await get(`/rest/core-meta-records/${rec.id}/status`, owner)).json();
    expect(status).toMatchObject({
      leftRemoteId: 'L-42',
      rightRemoteId: 'R-42',
      shadow: { name: 'Grace Hopper' },
    });
    expect(status.openIssues).toEqual([
      expect.objectContaining({ code: 'validation', userFacingMessage: 'Too long.' }),
    ]);
    expect(status.lastChange).toMatchObject({ side: 'left', operation: 'update' });
    expect((await get(`/rest/core-meta-records/${rec.id}/status`, other)).statusCode).toBe(404);

    expect(
      (await get(`/rest/core-meta-records/${baseId}/search?query=hopper`, owner))
        .json()
        .items.map((r: { id: string }) => r.id),
    ).toEqual([rec.id]);
    expect((await get(`/rest/core-meta-records/${baseId}/search?query=R-42`, owner)).json().total).toBe(1);
    expect((await get(`/rest/core-meta-records/${baseId}/search?query=nobody`, owner)).json().total).toBe(0);
    expect((await get(`/rest/core-meta-records/${baseId}/search?query=hopper`, other)).statusCode).toBe(404);

    const history = (
      await get(`/rest/core-meta-records/debug/history?coreMetaRecordId=${rec.id}`, owner)
    ).json();
    expect(history.items.map((h: { operation: string }) => h.operation)).toEqual(['create', 'update']);
    expect(history.items[1]).toMatchObject({ before: { name: 'Grace' }, after: { name: 'Grace Hopper' } });
  });
});
