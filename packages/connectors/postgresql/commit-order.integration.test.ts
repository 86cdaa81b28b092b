import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadPage } from '../sdk/connector';
import { createTestDatabase } from '../test-support/test-database';
import { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';

// Change ids are handed out in statement order, transactions commit in another: a change whose
// transaction commits after a later change was read must still be read (in the same database, the
// user's writes on connections of their own, as a person's are).
let url: string;
let user: pg.Pool;
const connectors: PostgresqlConnector[] = [];

beforeAll(async () => {
  url = await createTestDatabase('co');
  // public first: the test server's user is named like Lockstep's schema, which "$user" would pick.
  user = new pg.Pool({ connectionString: url, max: 4, options: '-c search_path=public' });
});

afterAll(async () => {
  for (const c of connectors) await c.end();
  await user.query(
    `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()`,
  );
  await user.end();
});

/** Reads from `cursor` to the end of what is readable now. */
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
    updated: pages.flatMap((p) => p.records.map((r) => `${r.id}:${r.fields.name}`)).sort(),
    deleted: pages.flatMap((p) => p.deletedIds).sort(),
    waiting: pages.at(-1)?.waiting ?? false,
  };
}

describe.each(['triggers', 'logical'] as const)(
  'PostgreSQL change capture (%s) in commit order',
  (capture) => {
    const table = `people_${capture}`;
    it('reads a change whose transaction commits after a later change was read, and says it waits meanwhile', async () => {
      await user.query(`create table ${table} (id int primary key, name text)`);
      await user.query(`insert into ${table} select g, 'n' || g from generate_series(1, 5) g`);
      const c = createPostgresqlConnector({ connectionString: url, changeCapture: capture });
      connectors.push(c);
      let { cursor } = await drain(c, table, null);

      // A long transaction deletes row 1 and updates row 3 (its change ids are the lower ones) ...
      const late = await user.connect();
      try {
        await late.query('begin');
        await late.query(`delete from ${table} where id = 1`);
        await late.query(`update ${table} set name = 'late' where id = 3`);
        // ... while another edit commits at once, with higher change ids.
        await user.query(`update ${table} set name = 'quick' where id = 2`);
        const during = await drain(c, table, cursor);
        // The quick edit waits behind the open transaction: reading it now would move the cursor
        // past the late changes.
        expect(during.updated).toEqual([]);
        expect(during.waiting).toBe(true);
        cursor = during.cursor;
        await late.query('commit');
      } finally {
        late.release();
      }

      const after = await drain(c, table, cursor);
      expect(after.deleted).toEqual(['1']);
      expect(after.updated).toEqual(['2:quick', '3:late']);
      expect(after.waiting).toBe(false);
      // And nothing is read twice once read.
      const again = await drain(c, table, after.cursor);
      expect(again.updated).toEqual([]);
      expect(again.deleted).toEqual([]);
    });

    it('goes on from a cursor of the older id-only form without losing the changes after it', async () => {
      const t2 = `${table}_legacy`;
      await user.query(`create table ${t2} (id int primary key, name text)`);
      await user.query(`insert into ${t2} select g, 'n' || g from generate_series(1, 3) g`);
      const c = createPostgresqlConnector({ connectionString: url, changeCapture: capture });
      connectors.push(c);
      const { cursor } = await drain(c, t2, null);
      await user.query(`update ${t2} set name = 'edited' where id = 2`);
      if (capture === 'logical') await drain(c, t2, cursor); // pumps the slot into the change table
      const latest = (
        await user.query('select max(id)::text as id from lockstep.changes where table_name = $1', [
          `public.${t2}`,
        ])
      ).rows[0].id as string;
      // The cursor a reader of the previous version stored: just before the edit's change id.
      const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      const legacy = Buffer.from(
        JSON.stringify({ mode: 'changes', since: String(BigInt(latest) - 1n), capture: decoded.capture }),
      ).toString('base64url');
      const read = await drain(c, t2, legacy);
      expect(read.updated).toEqual(['2:edited']);
    });
  },
);
