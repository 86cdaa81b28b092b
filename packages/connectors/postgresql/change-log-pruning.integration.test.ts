import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../test-support/test-database';
import { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';

// The `lockstep` schema in the user's database must not grow without end: old changes and old
// idempotency keys are pruned, and a reader whose cursor is older than what was pruned scans again.
let url: string;
let user: pg.Pool;
const connectors: PostgresqlConnector[] = [];

beforeAll(async () => {
  url = await createTestDatabase('prune');
  user = new pg.Pool({ connectionString: url, max: 2 });
  await user.query('create table notes (id serial primary key, body text)');
});

afterAll(async () => {
  for (const c of connectors) await c.end();
  await user.end();
});

function connector() {
  const c = createPostgresqlConnector({ connectionString: url });
  connectors.push(c);
  return c;
}

async function drain(c: PostgresqlConnector, cursor: string | null) {
  let next = cursor;
  const ids: string[] = [];
  for (;;) {
    const page = await c.read('public.notes', next, { pageSize: 100 });
    ids.push(...page.records.map((r) => r.id));
    next = page.nextCursor;
    if (!page.hasMore) return { cursor: next as string, ids };
  }
}

describe('PostgreSQL change log pruning', () => {
  it('deletes changes and idempotency keys past their retention; an older cursor scans again', async () => {
    const first = connector();
    const early = (await drain(first, null)).cursor;
    await user.query(`insert into notes (body) values ('a'), ('b'), ('c')`);
    const caughtUp = await drain(first, early);
    expect(caughtUp.ids).toHaveLength(3);
    const [made] = await first.write('public.notes', [
      {
        kind: 'create',
        idempotencyKey: `old-${randomBytes(4).toString('hex')}`,
        fields: { body: 'by Lockstep' },
      },
    ]);
    expect(made?.ok).toBe(true);
    // A week and a month go by.
    await user.query(`update lockstep.changes set changed_at = now() - interval '8 days'`);
    await user.query(`update lockstep.applied_writes set applied_at = now() - interval '31 days'`);
    await user.query(`insert into notes (body) values ('fresh')`);

    // A reader that kept up: the old changes go, its next read is incremental as before.
    const second = connector();
    const next = await second.read('public.notes', caughtUp.cursor, { pageSize: 100 });
    expect(next.records.map((r) => r.fields.body)).toEqual(['fresh']);
    expect(next.scanComplete).toBe(false);
    const left = await user.query('select pk from lockstep.changes order by id');
    expect(
      left.rows.map((r) => r.pk),
      'only the fresh change is kept',
    ).toHaveLength(1);
    expect((await user.query('select 1 from lockstep.applied_writes')).rowCount).toBe(0);

    // A reader away since before those changes cannot trust its cursor: the table is scanned again.
    const rescan = await second.read('public.notes', early, { pageSize: 100 });
    expect(rescan.scanComplete).toBe(true);
    expect(rescan.records.map((r) => r.fields.body).sort()).toEqual(['a', 'b', 'by Lockstep', 'c', 'fresh']);
  });
});
