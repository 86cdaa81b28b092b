import type pg from 'pg';
import { qualified } from './connection';

/**
 * Change capture in a `lockstep` schema, installed when a table is first synced: a trigger per table
 * records each change (with the writer's origin, so Lockstep's own writes are recognisable) and
 * NOTIFYs `lockstep_changes` for real time. Idempotency keys of applied writes live beside it.
 */
export async function installChangeCapture(client: pg.PoolClient, table: string, primaryKey: string) {
  await client.query('begin');
  try {
    // One installer at a time, across workers.
    await client.query(`select pg_advisory_xact_lock(hashtext('lockstep-change-capture'))`);
    await client.query('create schema if not exists lockstep');
    await client.query(`create table if not exists lockstep.changes (
      id bigserial primary key, table_name text not null, pk text not null, op char(1) not null,
      origin text, changed_at timestamptz not null default now())`);
    await client.query('create index if not exists changes_table_idx on lockstep.changes (table_name, id)');
    await client.query(`create table if not exists lockstep.applied_writes (
      idempotency_key text primary key, table_name text not null, pk text not null, applied_at timestamptz not null default now())`);
    await client.query(`create or replace function lockstep.capture() returns trigger language plpgsql as $fn$
      declare v text;
      begin
        if TG_OP = 'DELETE' then execute format('select ($1).%I::text', TG_ARGV[0]) into v using OLD;
        else execute format('select ($1).%I::text', TG_ARGV[0]) into v using NEW; end if;
        insert into lockstep.changes (table_name, pk, op, origin)
          values (TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, v, left(TG_OP, 1), current_setting('lockstep.origin', true));
        -- Lockstep's own writes are recorded but not announced: no run is woken for an echo.
        if coalesce(current_setting('lockstep.origin', true), '') <> 'lockstep' then
          perform pg_notify('lockstep_changes', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
        end if;
        return null;
      end $fn$`);
    const exists = await client.query(
      `select 1 from pg_trigger where tgname = 'lockstep_capture' and tgrelid = $1::regclass`,
      [qualified(table)],
    );
    if (exists.rowCount === 0) {
      await client.query(
        `create trigger lockstep_capture after insert or update or delete on ${qualified(table)}
           for each row execute function lockstep.capture(${quoteLiteral(primaryKey)})`,
      );
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

const quoteLiteral = (s: string) => `'${s.replaceAll("'", "''")}'`;

export async function latestChangeId(client: pg.PoolClient | pg.Pool): Promise<string> {
  const r = await client.query('select coalesce(max(id), 0)::text as id from lockstep.changes');
  return String(r.rows[0]?.id ?? '0');
}
