import type pg from 'pg';
import { createAppliedBatches } from './applied-writes';
import { qualified } from './connection';

/**
 * Change capture in a `lockstep` schema, installed when a table is first synced: triggers on the
 * table record each changed row's key (except Lockstep's own writes, tagged by the
 * `lockstep.origin` setting) and NOTIFY `lockstep_changes` for real time. Idempotency keys of
 * applied writes live beside it.
 */
export async function installChangeCapture(client: pg.PoolClient, table: string, primaryKey: string) {
  await client.query('begin');
  try {
    // One installer at a time, across workers.
    await client.query(`select pg_advisory_xact_lock(hashtext('lockstep-change-capture'))`);
    await createChangeTables(client);
    // Statement-level triggers with transition tables: one insert per statement, not a dynamic
    // EXECUTE per row (that cost ~40 us a row; a 10,000-row update paid 0.4 s in the trigger).
    // Lockstep's own writes are not recorded at all: reading them back would only find echoes.
    await client.query(`create or replace function lockstep.capture_rows() returns trigger language plpgsql as $fn$
      declare n bigint;
      begin
        if coalesce(current_setting('lockstep.origin', true), '') = 'lockstep' then return null; end if;
        execute format('insert into lockstep.changes (table_name, pk, op) select $1, (%I)::text, $2 from %I',
          TG_ARGV[0], case when TG_OP = 'DELETE' then 'lockstep_old_rows' else 'lockstep_new_rows' end)
          using TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, left(TG_OP, 1);
        get diagnostics n = row_count;
        if n > 0 then perform pg_notify('lockstep_changes', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME); end if;
        return null;
      end $fn$`);
    // The row-level trigger of earlier installs is replaced.
    await client.query(`drop trigger if exists lockstep_capture on ${qualified(table)}`);
    const exists = await client.query(
      `select 1 from pg_trigger where tgname = 'lockstep_capture_insert' and tgrelid = $1::regclass`,
      [qualified(table)],
    );
    if (exists.rowCount === 0) {
      const pk = quoteLiteral(primaryKey);
      for (const [event, ref] of [
        ['insert', 'new table as lockstep_new_rows'],
        ['update', 'new table as lockstep_new_rows'],
        ['delete', 'old table as lockstep_old_rows'],
      ] as const) {
        await client.query(
          `create trigger lockstep_capture_${event} after ${event} on ${qualified(table)}
             referencing ${ref} for each statement execute function lockstep.capture_rows(${pk})`,
        );
      }
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

/** The `lockstep` schema's change table and applied writes (both captures use them); in the caller's transaction. */
async function createChangeTables(client: pg.ClientBase) {
  await client.query('create schema if not exists lockstep');
  // `xid`: the writing transaction (the triggers run in it, so the default is right). Readers order
  // by (xid, id) and stop below the oldest transaction still running: ids are handed out in
  // statement order, not commit order, so reading by id alone skipped a change that committed late.
  await client.query(`create table if not exists lockstep.changes (
    id bigserial primary key, table_name text not null, pk text not null, op char(1) not null,
    origin text, changed_at timestamptz not null default now(),
    xid xid8 not null default pg_current_xact_id())`);
  // Installs made before commit-order reads: their rows take the upgrading transaction's id.
  await client.query(
    'alter table lockstep.changes add column if not exists xid xid8 not null default pg_current_xact_id()',
  );
  await client.query('create index if not exists changes_table_idx on lockstep.changes (table_name, id)');
  await client.query(
    'create index if not exists changes_commit_order_idx on lockstep.changes (table_name, xid, id)',
  );
  await client.query(`create table if not exists lockstep.applied_writes (
    idempotency_key text primary key, table_name text not null, pk text not null, applied_at timestamptz not null default now())`);
  await client.query(
    'create index if not exists applied_writes_applied_at_idx on lockstep.applied_writes (applied_at)',
  );
  // 'c' a create, 'u' an update (kept a day: only a crashed run's replay asks for it).
  await client.query(
    `alter table lockstep.applied_writes add column if not exists op char(1) not null default 'c'`,
  );
  await createAppliedBatches(client);
  await createCaptureState(client);
}

async function createCaptureState(client: pg.ClientBase) {
  await client.query(
    'create table if not exists lockstep.capture_state (name text primary key, value text not null)',
  );
}

/** Changes are kept this long: a reader away longer scans its table again (see `prunedThrough`). */
export const CHANGE_RETENTION = '7 days';
/** Idempotency keys are kept this long: a create is retried within minutes or hours, not a month. */
export const APPLIED_WRITE_RETENTION = '30 days';
/** An update's key only serves the replay of a run that crashed around its commit. */
export const APPLIED_UPDATE_RETENTION = '1 day';

/**
 * Keeps the `lockstep` schema from growing without end in the user's database: changes older
 * than CHANGE_RETENTION and idempotency keys older than APPLIED_WRITE_RETENTION are deleted, at most
 * `batch` of each per call (oldest first). The highest change id deleted is kept as
 * `pruned_through`, so a reader whose cursor is older knows it may have missed some. One pruner at
 * a time across workers; the others skip.
 */
export async function pruneChangeLog(
  client: pg.ClientBase,
  batch = 50_000,
): Promise<{ changes: number; appliedWrites: number }> {
  await client.query('begin');
  try {
    const locked = await client.query(
      `select pg_try_advisory_xact_lock(hashtext('lockstep-prune-change-log')) as ok`,
    );
    if (!locked.rows[0]?.ok) {
      await client.query('rollback');
      return { changes: 0, appliedWrites: 0 };
    }
    await createCaptureState(client);
    await client.query(
      'create index if not exists applied_writes_applied_at_idx on lockstep.applied_writes (applied_at)',
    );
    await createAppliedBatches(client);
    // The oldest change first: when it is recent, nothing is scanned.
    const oldest = await client.query(
      `select changed_at < now() - $1::interval as old from lockstep.changes order by id limit 1`,
      [CHANGE_RETENTION],
    );
    let changes = 0;
    if (oldest.rows[0]?.old) {
      const gone = await client.query(
        `with gone as (
           delete from lockstep.changes where id in (
             select id from lockstep.changes where changed_at < now() - $1::interval order by id limit $2)
           returning id, xid)
         select count(*)::int as n, max(id)::text as last,
                (select xid::text || ':' || id::text from gone order by xid desc, id desc limit 1) as last_pos
           from gone`,
        [CHANGE_RETENTION, batch],
      );
      changes = gone.rows[0]?.n ?? 0;
      if (gone.rows[0]?.last)
        await client.query(
          `insert into lockstep.capture_state (name, value) values ('pruned_through', $1)
             on conflict (name) do update
               set value = greatest(lockstep.capture_state.value::bigint, excluded.value::bigint)::text`,
          [gone.rows[0].last],
        );
      // In commit order too: the highest (transaction, id) pruned, as `xid:id`.
      if (gone.rows[0]?.last_pos) {
        const was = await prunedPosition(client);
        const [xid, id] = (gone.rows[0].last_pos as string).split(':').map(BigInt) as [bigint, bigint];
        if (!was || xid > was.xid || (xid === was.xid && id > was.id))
          await client.query(
            `insert into lockstep.capture_state (name, value) values ('pruned_through_pos', $1)
               on conflict (name) do update set value = excluded.value`,
            [gone.rows[0].last_pos],
          );
      }
    }
    const applied = await client.query(
      `with gone as (
         delete from lockstep.applied_writes where idempotency_key in (
           select idempotency_key from lockstep.applied_writes
            where applied_at < now() - $1::interval order by applied_at limit $2)
         returning 1),
       updates as (
         delete from lockstep.applied_writes where idempotency_key in (
           select idempotency_key from lockstep.applied_writes
            where op = 'u' and applied_at < now() - $3::interval order by applied_at limit $2)
         returning 1),
       batches as (
         delete from lockstep.applied_batches where id in (
           select id from lockstep.applied_batches
            where applied_at < now() - case op when 'u' then $3::interval else $1::interval end
            order by applied_at limit greatest(1, $2::int / 1000))
         returning cardinality(keys) as n)
       select (select count(*) from gone)::int + (select count(*) from updates)::int
         + (select coalesce(sum(n), 0) from batches)::int as n`,
      [APPLIED_WRITE_RETENTION, batch, APPLIED_UPDATE_RETENTION],
    );
    await client.query('commit');
    return { changes, appliedWrites: applied.rows[0]?.n ?? 0 };
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

/** The highest change id pruned (0 if none): a cursor below it may have missed changes. */
export async function prunedThrough(client: pg.ClientBase): Promise<bigint> {
  const r = await client
    .query(`select value from lockstep.capture_state where name = 'pruned_through'`)
    .catch((error: { code?: string }) => {
      // Installed before pruning existed, and never pruned yet.
      if (error.code === '42P01') return { rows: [] };
      throw error;
    });
  return BigInt((r.rows[0]?.value as string | undefined) ?? 0);
}

/** The highest (transaction, change id) pruned, null if none: a cursor below it may have missed changes. */
export async function prunedPosition(client: pg.ClientBase): Promise<{ xid: bigint; id: bigint } | null> {
  const r = await client
    .query(`select value from lockstep.capture_state where name = 'pruned_through_pos'`)
    .catch((error: { code?: string }) => {
      if (error.code === '42P01') return { rows: [] };
      throw error;
    });
  const value = r.rows[0]?.value as string | undefined;
  if (!value) return null;
  const [xid, id] = value.split(':').map(BigInt) as [bigint, bigint];
  return { xid, id };
}

/** The change tables on their own (logical decoding fills them without triggers). */
export async function ensureChangeTables(client: pg.ClientBase) {
  await client.query('begin');
  try {
    await client.query(`select pg_advisory_xact_lock(hashtext('lockstep-change-capture'))`);
    await createChangeTables(client);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

const quoteLiteral = (s: string) => `'${s.replaceAll("'", "''")}'`;

export async function latestChangeId(client: pg.ClientBase | pg.Pool): Promise<string> {
  const r = await client.query('select coalesce(max(id), 0)::text as id from lockstep.changes');
  return String(r.rows[0]?.id ?? '0');
}

/**
 * The oldest transaction still running (`pg_snapshot_xmin`): every change of a transaction below it
 * has committed or rolled back, and every transaction yet to commit has an id at or above it.
 */
export async function changeHorizon(client: pg.ClientBase): Promise<string> {
  const r = await client.query('select pg_snapshot_xmin(pg_current_snapshot())::text as x');
  return String(r.rows[0].x);
}

/**
 * Whether the change tables have this version's columns (`changes.xid`, `applied_writes.op`,
 * `applied_batches`); tables
 * made by an earlier version are upgraded by ensureChangeTables. False before any install.
 */
export async function hasCurrentChangeTables(client: pg.ClientBase): Promise<boolean> {
  const r = await client.query(
    `select count(*)::int as n from pg_attribute
      where not attisdropped and ((attrelid = to_regclass('lockstep.changes') and attname = 'xid')
         or (attrelid = to_regclass('lockstep.applied_writes') and attname = 'op')
         or (attrelid = to_regclass('lockstep.applied_batches') and attname = 'keys'))`,
  );
  return r.rows[0]?.n === 3;
}
