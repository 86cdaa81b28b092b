import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadPage } from '../sdk/connector';
import { ConnectorError } from '../sdk/connector';
import { createTestDatabase } from '../test-support/test-database';
import * as decoding from './logical-decoding';
import { releaseLogicalCapture } from './logical-decoding';
import { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';

// Logical decoding against the run's embedded PostgreSQL (started with wal_level=logical), in a
// database of its own: the user's writes are plain SQL on another connection, as a person's are.
let url: string;
let user: pg.Pool;
const connectors: PostgresqlConnector[] = [];

beforeAll(async () => {
  url = await createTestDatabase('ld');
  user = new pg.Pool({ connectionString: url, max: 2 });
  await user.query(
    `create table people (id serial primary key, email text unique, name text);
     create table "Odd ""Name""" ("Key" text primary key, v text)`,
  );
});

afterAll(async () => {
  for (const c of connectors) await c.end();
  await user.query(
    `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()`,
  );
  await user.end();
});

function connector() {
  const c = createPostgresqlConnector({ connectionString: url, changeCapture: 'logical' });
  connectors.push(c);
  return c;
}

/** Reads from `cursor` to the end; answers what was read and the cursor to go on from. */
async function drain(c: PostgresqlConnector, table: string, cursor: string | null) {
  const pages: ReadPage[] = [];
  let next = cursor;
  for (;;) {
    const page = await c.read(table, next, { pageSize: 100 });
    pages.push(page);
    next = page.nextCursor;
    if (!page.hasMore) break;
  }
  return {
    cursor: next as string,
    ids: pages.flatMap((p) => p.records.map((r) => r.id)).sort(),
    deleted: pages.flatMap((p) => p.deletedIds).sort(),
    records: pages.flatMap((p) => p.records),
  };
}

describe('PostgreSQL change capture by logical decoding', () => {
  it('reads edits from the WAL without a trigger on the table, and never reads back its own writes', async () => {
    await user.query(
      `insert into people (email, name) values ('ada@x.test', 'Ada'), ('alan@x.test', 'Alan')`,
    );
    const c = connector();
    const first = await drain(c, 'public.people', null);
    expect(first.records.map((r) => r.fields.email).sort()).toEqual(['ada@x.test', 'alan@x.test']);
    const triggers = await user.query(`select 1 from pg_trigger where tgrelid = 'people'::regclass`);
    expect(triggers.rowCount, 'no trigger on the user table').toBe(0);
    const slots = await user.query(
      `select plugin from pg_replication_slots where database = current_database() and slot_type = 'logical'`,
    );
    expect(slots.rows).toEqual([{ plugin: 'test_decoding' }]);

    // Lockstep's own writes: a create, an update, a delete.
    const [made, changed] = await c.write('public.people', [
      {
        kind: 'create',
        idempotencyKey: `k-${randomBytes(4).toString('hex')}`,
        fields: { email: 'grace@x.test', name: 'Grace' },
      },
      { kind: 'update', idempotencyKey: 'u-1', remoteId: first.ids[0] as string, fields: { name: 'Ada L.' } },
    ]);
    expect(made?.ok && changed?.ok).toBe(true);
    const afterOwn = await drain(c, 'public.people', first.cursor);
    expect(afterOwn.ids, "Lockstep's own writes are not read back").toEqual([]);

    // A person's edits: an insert, an update of the row Lockstep just wrote, a delete, a key change.
    const [ada, alan] = first.ids;
    await user.query(`insert into people (email, name) values ('linus@x.test', 'Linus')`);
    await user.query(`update people set name = 'Ada Lovelace' where id = $1`, [ada]);
    await user.query('delete from people where id = $1', [alan]);
    const grace = made?.ok ? made.remoteId : '';
    await user.query('update people set id = 1000 where id = $1', [grace]);
    const edits = await drain(c, 'public.people', afterOwn.cursor);
    const linus = (await user.query(`select id::text from people where email = 'linus@x.test'`)).rows[0].id;
    expect(edits.ids).toEqual([ada, '1000', linus].sort());
    expect(edits.records.find((r) => r.id === ada)?.fields.name).toBe('Ada Lovelace');
    expect(edits.deleted).toEqual([alan, grace].sort());
  });

  it('serves two readers of one table from one slot, each from its own cursor', async () => {
    const a = connector();
    const b = connector();
    const ca = (await drain(a, 'public.people', null)).cursor;
    const cb = (await drain(b, 'public.people', null)).cursor;
    await user.query(`insert into people (email) values ('two@x.test')`);
    const ra = await drain(a, 'public.people', ca);
    const rb = await drain(b, 'public.people', cb);
    expect(ra.records.map((r) => r.fields.email)).toEqual(['two@x.test']);
    expect(rb.records.map((r) => r.fields.email)).toEqual(['two@x.test']);
    const slots = await user.query(`select 1 from pg_replication_slots where database = current_database()`);
    expect(slots.rowCount).toBe(1);
  });

  it('keys quoted table and column names', async () => {
    const c = connector();
    const table = 'public.Odd "Name"';
    const start = await drain(c, table, null);
    await user.query(`insert into "Odd ""Name""" ("Key", v) values ('it''s a key', 'x')`);
    const read = await drain(c, table, start.cursor);
    expect(read.ids).toEqual(["it's a key"]);
  });

  it('stores each change once when the slot did not move after a crash', async () => {
    const c = connector();
    const start = await drain(c, 'public.people', null);
    await user.query(`insert into people (email) values ('once@x.test')`);
    // The pump stores what it decoded and commits, then dies before it advances the slot.
    const client = await user.connect();
    const crashing = Object.create(client) as pg.PoolClient;
    crashing.query = ((text: unknown, ...rest: unknown[]) => {
      if (typeof text === 'string' && text.includes('pg_replication_slot_advance'))
        return Promise.reject(new Error('worker killed'));
      return (client.query as (...a: unknown[]) => unknown)(text, ...rest);
    }) as pg.PoolClient['query'];
    await expect(decoding.pumpDecodedChanges(crashing)).rejects.toThrow('worker killed');
    await client.query(`select pg_advisory_unlock_all()`);
    client.release();
    const stored = await user.query(
      `select count(*)::int as n from lockstep.changes where table_name = 'public.people'
          and pk = (select id::text from people where email = 'once@x.test')`,
    );
    expect(stored.rows[0].n).toBe(1);
    // The next pump peeks the same transaction again and skips it.
    const read = await drain(c, 'public.people', start.cursor);
    expect(read.records.map((r) => r.fields.email)).toEqual(['once@x.test']);
    const again = await user.query(
      `select count(*)::int as n from lockstep.changes where table_name = 'public.people'
          and pk = (select id::text from people where email = 'once@x.test')`,
    );
    expect(again.rows[0].n).toBe(1);
  });

  it('scans the table again when its slot was dropped, and keeps no WAL once released', async () => {
    const c = connector();
    const start = await drain(c, 'public.people', null);
    const client = await user.connect();
    try {
      expect(await releaseLogicalCapture(client)).toEqual({ released: true });
    } finally {
      client.release();
    }
    const none = await user.query(`select 1 from pg_replication_slots where database = current_database()`);
    expect(none.rowCount, 'no slot left to hold WAL').toBe(0);
    // Changes made while no slot existed are not lost: the old cursor's reader scans again.
    await user.query(`insert into people (email) values ('while-away@x.test')`);
    const page = await c.read('public.people', start.cursor, { pageSize: 10_000 });
    expect(page.scanComplete).toBe(true);
    expect(page.records.map((r) => r.fields.email)).toContain('while-away@x.test');
    const again = await user.query(`select 1 from pg_replication_slots where database = current_database()`);
    expect(again.rowCount).toBe(1);
    // And from the new cursor it reads incrementally again.
    await user.query(`insert into people (email) values ('back@x.test')`);
    const next = await drain(c, 'public.people', page.nextCursor);
    expect(next.records.map((r) => r.fields.email)).toEqual(['back@x.test']);
  });

  it('refuses a user that may not use replication slots, saying what to do', async () => {
    const role = `ld_plain_${randomBytes(3).toString('hex')}`;
    await user.query(`create role ${role} login password 'pw'; grant all on schema public to ${role}`);
    await user.query(`grant all on all tables in schema public to ${role}`);
    const u = new URL(url);
    u.username = role;
    u.password = 'pw';
    const c = createPostgresqlConnector({ connectionString: u.toString(), changeCapture: 'logical' });
    connectors.push(c);
    const error = await c.read('public.people', null, { pageSize: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error).toMatchObject({
      code: 'permission_denied',
      userFacingMessage: expect.stringContaining(`ALTER ROLE "${role}" REPLICATION`),
    });
  });
});
