import type pg from 'pg';

/**
 * Idempotency keys of the writes Lockstep made in the user's database, in the write's own
 * transaction, so a write sent again (a replay after a crash, an unknown outcome) is recognised
 * instead of made twice.
 *
 * Two stores: `applied_writes`, a row per key (an incremental run's few writes; looked up by its
 * index), and `applied_batches`, a row per bulk write (a first sync's thousands of creates): one row
 * with the batch's keys and primary keys as arrays instead of a row and an index entry per record
 * (per 100k records: 1.4 s of the target's time for the per-key lookup and insert). A batch's keys
 * are kept that way only when its caller says they are fresh (never sent before), so no lookup is
 * skipped for a write that could be a replay; a replay reads both stores.
 */

/** A fresh write of at least this many keys is kept as one batch row. */
export const BATCH_KEYS_MIN = 200;

/** Creates the batch store (the per-key one is made with the change tables); in the caller's transaction. */
export async function createAppliedBatches(client: pg.ClientBase) {
  await client.query(`create table if not exists lockstep.applied_batches (
    id bigserial primary key, table_name text not null, op char(1) not null,
    keys text[] not null, pks text[] not null, applied_at timestamptz not null default now())`);
  // The keys are hashes: compressing them is work for nothing.
  await client.query(
    'alter table lockstep.applied_batches alter column keys set storage external, alter column pks set storage external',
  );
  await client.query(
    'create index if not exists applied_batches_table_idx on lockstep.applied_batches (table_name)',
  );
  await client.query(
    'create index if not exists applied_batches_applied_at_idx on lockstep.applied_batches (applied_at)',
  );
}

/** The primary key (as text) each of these keys wrote, for the keys already applied to `table`. */
export async function appliedKeys(
  client: pg.ClientBase,
  table: string,
  keys: string[],
): Promise<Map<string, string>> {
  const found = await client.query<{ k: string; pk: string }>(
    `select idempotency_key as k, pk from lockstep.applied_writes where idempotency_key = any($1::text[])
     union all
     select u.k, b.pks[u.o] from lockstep.applied_batches b
       cross join lateral unnest(b.keys) with ordinality as u(k, o)
       join unnest($1::text[]) as q(k) on q.k = u.k
      where b.table_name = $2`,
    [keys, table],
  );
  return new Map(found.rows.map((r) => [r.k, r.pk]));
}

/**
 * Keeps the keys of what a write call made (`c`) or updated (`u`): as one batch row when they are
 * fresh and many, else a row each.
 */
export async function keepKeys(
  client: pg.ClientBase,
  table: string,
  op: 'c' | 'u',
  written: { key: string; pk: string }[],
  fresh: boolean,
) {
  if (written.length === 0) return;
  const keys = written.map((w) => w.key);
  const pks = written.map((w) => w.pk);
  if (fresh && written.length >= BATCH_KEYS_MIN)
    await client.query(
      'insert into lockstep.applied_batches (table_name, op, keys, pks) values ($1, $2, $3::text[], $4::text[])',
      [table, op, keys, pks],
    );
  else
    await client.query(
      `insert into lockstep.applied_writes (idempotency_key, table_name, pk, op)
         select k, $2, p, $4 from unnest($1::text[], $3::text[]) as u(k, p) on conflict do nothing`,
      [keys, table, pks, op],
    );
}
