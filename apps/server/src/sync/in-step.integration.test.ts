import { randomBytes } from 'node:crypto';
import type { TableConnector } from '@lockstep/connectors';
import { createPostgresqlConnector } from '@lockstep/connectors/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// The "in step" guarantee between two real PostgreSQL databases through the real queue and workers:
// a write never lands blind over an edit made after Lockstep read the row, and the same new record
// inserted on both sides is linked, not duplicated nor failed forever.
let t: TestApp;
let api: Api;
let coreBaseId = '';
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const sql = (side: 'left' | 'right', text: string) => query(urls[side], text);

/** A user's edit that lands on a side right before Lockstep's next write there (after its read). */
const beforeNextWrite: Partial<Record<'left' | 'right', () => Promise<void>>> = {};
/** What happens right after Lockstep's next update there committed (e.g. the worker dies). */
const afterNextWrite: Partial<Record<'left' | 'right', () => Promise<void>>> = {};

const nameOf = async (side: 'left' | 'right', email: string) =>
  (await sql(side, `select name from people where email = '${email}'`)).map((r) => r.name as string);
const idle = async () => {
  await until(
    async () =>
      !(await t.ctx.db
        .selectFrom('sync_log')
        .select('id')
        .where('core_base_id', '=', coreBaseId)
        .where('status', '=', 'running')
        .executeTakeFirst()),
    'idle',
  );
};

beforeAll(async () => {
  t = await createTestApp();
  // The real PostgreSQL connector, with a hook that plays a person editing between read and write.
  t.ctx.runtimeConnectors.register('postgresql', (secrets) => {
    const real = createPostgresqlConnector(secrets);
    const side = secrets.connectionString === urls.left ? 'left' : 'right';
    const wrapped: TableConnector = {
      ...real,
      read: real.read.bind(real),
      async write(table, requests) {
        const hook = beforeNextWrite[side];
        if (hook && requests.some((r) => r.kind !== 'create')) {
          delete beforeNextWrite[side];
          await hook();
        }
        const results = await real.write(table, requests);
        const after = afterNextWrite[side];
        if (after && requests.some((r) => r.kind === 'update')) {
          delete afterNextWrite[side];
          await after();
        }
        return results;
      },
    };
    return wrapped;
  });
  api = apiAs(t.app, (await signUp(t.app, 'in-step@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `is_${side}_${suffix}`);
    urls[side] = databaseUrl(`is_${side}_${suffix}`);
    await sql(side, 'create table people (id serial primary key, email text not null unique, name text)');
  }
  await sql(
    'left',
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, 5) g`,
  );
  const core = await setUpPeopleSync(api, urls, { name: 'In step', conflictWinnerSide: 'left' });
  coreBaseId = core.id;
  await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
  await until(
    async () => (await sql('right', 'select count(*)::int as n from people'))[0]?.n === 5,
    'first sync',
  );
  await idle();
});
afterAll(async () => {
  await t.close();
});

describe('PostgreSQL <-> PostgreSQL in step', () => {
  it('never overwrites an edit made after the read: the changed row is compared again and the winner side decides', async () => {
    // Left is the winner. Lockstep reads the right's edit; before it writes it to the left, a person
    // edits the same field on the left.
    beforeNextWrite.left = async () => {
      await sql('left', `update people set name = 'Left 111' where email = 'p2@example.com'`);
    };
    await sql('right', `update people set name = 'Right 222' where email = 'p2@example.com'`);
    await until(
      async () =>
        (await nameOf('right', 'p2@example.com'))[0] === 'Left 111' &&
        (await nameOf('left', 'p2@example.com'))[0] === 'Left 111',
      'both sides hold the winner (left) value',
    );
    await idle();
    expect(await nameOf('left', 'p2@example.com')).toEqual(['Left 111']);
    expect(await nameOf('right', 'p2@example.com')).toEqual(['Left 111']);
    // The overwritten value is in the operations log, as the "before" of the write that replaced it.
    const ops = await t.ctx.db
      .selectFrom('sync_log_entry')
      .select(['side', 'operation', 'before', 'after'])
      .where('core_base_id', '=', coreBaseId)
      .where('operation', '=', 'update')
      .execute();
    expect(ops).toContainEqual(
      expect.objectContaining({ side: 'right', before: { name: 'Right 222' }, after: { name: 'Left 111' } }),
    );
    expect(ops.some((o) => o.side === 'left' && (o.after as { name?: string })?.name === 'Right 222')).toBe(
      false,
    );
  });

  it('links the same new record inserted on both sides instead of failing both creates forever', async () => {
    await Promise.all([
      sql('left', `insert into people (email, name) values ('twin@example.com', 'Twin from left')`),
      sql('right', `insert into people (email, name) values ('twin@example.com', 'Twin from right')`),
    ]);
    await until(
      async () => (await nameOf('right', 'twin@example.com'))[0] === 'Twin from left',
      'the winner side (left) value on both sides',
    );
    await idle();
    expect(await nameOf('left', 'twin@example.com')).toEqual(['Twin from left']);
    expect(await nameOf('right', 'twin@example.com')).toEqual(['Twin from left']);
    const open = await t.ctx.db
      .selectFrom('sync_error')
      .select(['code', 'message', 'side'])
      .where('core_base_id', '=', coreBaseId)
      .where('status', '=', 'open')
      .execute();
    expect(open).toEqual([]);
    // Linked: a later delete on one side reaches the other.
    await sql('right', `delete from people where email = 'twin@example.com'`);
    await until(async () => (await nameOf('left', 'twin@example.com')).length === 0, 'delete propagated');
  });

  it('keeps a retried issue open while its cause stands, and resolves it only once the record is in step', async () => {
    await sql('right', `alter table people add constraint no_forbidden check (name <> 'Forbidden')`);
    await sql('left', `update people set name = 'Forbidden' where email = 'p4@example.com'`);
    const openIssue = async () =>
      t.ctx.db
        .selectFrom('sync_error')
        .select(['id', 'status', 'attempts', 'side'])
        .where('core_base_id', '=', coreBaseId)
        .where('status', '!=', 'resolved')
        .execute();
    await until(async () => (await openIssue()).length === 1, 'an issue for the refused value');
    await idle();
    const [issue] = await openIssue();
    expect(issue?.side).toBe('right');

    // Retry with the cause unchanged: the record is read again on both sides and fails again, so the
    // same issue stays open (no "already in step"), and no second issue appears.
    await api('POST', `/rest/sync-errors/clear-and-retry/${issue?.id}`);
    await until(async () => {
      const [now] = await openIssue();
      return now?.status === 'open' && Number(now.attempts) > Number(issue?.attempts);
    }, 'the retry ran and failed again');
    await idle();
    expect((await openIssue()).map((i) => [i.id, i.status])).toEqual([[issue?.id, 'open']]);
    expect(await nameOf('right', 'p4@example.com')).toEqual(['Person 4']);

    // The cause fixed, a retry carries the value and resolves the issue.
    await sql('right', 'alter table people drop constraint no_forbidden');
    await api('POST', `/rest/sync-errors/clear-and-retry/${issue?.id}`);
    await until(
      async () => (await nameOf('right', 'p4@example.com'))[0] === 'Forbidden',
      'the value arrives',
    );
    await until(async () => (await openIssue()).length === 0, 'the issue resolved');
  });

  it("reads both records live for a record's status: in step only when the apps really agree", async () => {
    const link = await t.ctx.db
      .selectFrom('core_meta_record')
      .select('id')
      .where('core_base_id', '=', coreBaseId)
      .where('right_remote_id', '=', '5')
      .executeTakeFirstOrThrow();
    const status = async () => (await api('GET', `/rest/core-meta-records/${link.id}/status`)).live;
    expect(await status()).toEqual({ inStep: true, differences: [], why: null });
    // Switched off, an edit on the right is not synced: the status says so, with no issue open.
    await api('PATCH', `/rest/core-bases/${coreBaseId}`, { syncState: 'off' });
    await sql('right', `update people set name = 'Edited while off' where id = 5`);
    const off = await status();
    expect(off.inStep).toBe(false);
    expect(off.differences).toEqual([expect.objectContaining({ side: 'right' })]);
    await api('PATCH', `/rest/core-bases/${coreBaseId}`, { syncState: 'on' });
    await until(async () => (await status()).inStep === true, 'in step again once synced');
    expect((await sql('left', 'select name from people where id = 5'))[0]?.name).toBe('Edited while off');
  });

  it('takes an edit made after a crash between a write and its bookkeeping as the later edit, not a conflict', async () => {
    // The run writes the left's edit to the right, which commits; the worker dies before it records
    // that; meanwhile a person edits the right again. The left is the winner side, yet the right's
    // later edit must win: the left's was already carried over before it was made.
    afterNextWrite.right = async () => {
      await sql('right', `update people set name = 'Later on the right' where email = 'p3@example.com'`);
      throw new Error('the worker died before its bookkeeping');
    };
    await sql('left', `update people set name = 'Earlier on the left' where email = 'p3@example.com'`);
    await until(
      async () =>
        (await nameOf('left', 'p3@example.com'))[0] === 'Later on the right' &&
        (await nameOf('right', 'p3@example.com'))[0] === 'Later on the right',
      'the later edit on both sides',
      40_000,
    );
    await idle();
    expect(await nameOf('right', 'p3@example.com')).toEqual(['Later on the right']);
    const pending = await t.ctx.db.selectFrom('pending_write').select('idempotency_key').execute();
    expect(pending).toEqual([]);
  });

  it('loses no edit around a live filter or mapping change, and re-reads what enters the filter', async () => {
    const core = await api('GET', `/rest/core-bases/${coreBaseId}`);
    const tm = core.mappings.tableMappings[0];
    // The mapping as the web app sends it back (column mappings re-sent), with a filter added.
    const patchFilter = (filter: unknown) =>
      api('PATCH', `/rest/core-bases/${coreBaseId}`, {
        mappings: {
          tableMappings: [
            {
              id: tm.id,
              leftTableId: tm.leftTableId,
              rightTableId: tm.rightTableId,
              matchOnFieldId: tm.matchOnFieldId,
              conflictWinnerSide: tm.conflictWinnerSide,
              filter,
              columnMappings: tm.columnMappings.map((c: { leftColumnId: string; rightColumnId: string }) => ({
                leftColumnId: c.leftColumnId,
                rightColumnId: c.rightColumnId,
              })),
            },
          ],
        },
      });
    await patchFilter({ side: 'left', fieldId: 'name', op: 'contains', value: 'keep' });
    // Two edits on the right within a second of the change: one record in the filter, one outside.
    await sql('left', `update people set name = 'keep this one' where email = 'p1@example.com'`);
    await sql('right', `update people set name = 'Right edit, kept' where email = 'p1@example.com'`);
    await sql('left', `update people set name = 'left out' where email = 'p5@example.com'`);
    // The left wins the same-field conflict on p1 by the pair's rule; the edit is not lost unseen.
    await until(
      async () => (await nameOf('right', 'p1@example.com'))[0] === 'keep this one',
      'the edit inside the filter',
    );
    await idle();
    // Outside the filter: left alone, not written.
    expect(await nameOf('right', 'p5@example.com')).not.toEqual(['left out']);
    // The filter cleared: the record enters it and its edit arrives.
    await patchFilter(null);
    await until(
      async () => (await nameOf('right', 'p5@example.com'))[0] === 'left out',
      'the record entering',
    );
    // The field mappings kept their ids: every synced value still has its shadow.
    const after = await api('GET', `/rest/core-bases/${coreBaseId}`);
    expect(after.mappings.tableMappings[0].columnMappings.map((c: { id: string }) => c.id).sort()).toEqual(
      tm.columnMappings.map((c: { id: string }) => c.id).sort(),
    );
  });

  it('never deletes a record edited after the read: the edit wins over the delete by rule', async () => {
    beforeNextWrite.right = async () => {
      await sql(
        'right',
        `update people set name = 'Edited as it was deleted' where email = 'p4@example.com'`,
      );
    };
    await sql('left', `delete from people where email = 'p4@example.com'`);
    await until(
      async () => (await nameOf('left', 'p4@example.com'))[0] === 'Edited as it was deleted',
      'the edited record restored on the left',
    );
    await idle();
    expect(await nameOf('right', 'p4@example.com')).toEqual(['Edited as it was deleted']);
  });
});
