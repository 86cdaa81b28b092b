import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { ConnectorError } from '../sdk/connector';
import { ensureChangeTables } from './change-capture';

/**
 * Change capture by logical decoding, the option for databases with `wal_level = logical`: no
 * trigger on the user's tables (their writes cost nothing more), the changes read from the WAL.
 *
 * One replication slot per database (`lockstep_<database oid>`, plugin `test_decoding`, shipped
 * with PostgreSQL), shared by every Lockstep reader of that database. A *pump* drains the slot into
 * the same `lockstep.changes` table the triggers write, so each reader keeps its own cursor there
 * (two syncs of one table never fight over a slot), and readers do not care which capture filled it.
 *
 * - Exactly once: the slot is peeked, the changes stored with the position reached in one
 *   transaction, and only then is the slot advanced; a crash between the two re-peeks transactions
 *   the stored position already covers, and they are skipped.
 * - Lockstep's own writes carry a transactional logical message (`emitOwnWriteMark`); their whole
 *   transaction is skipped, so a write is never read back as an edit.
 * - Real time: the pump NOTIFYs `lockstep_changes` like the triggers; the worker's change listener
 *   runs it as soon as the server's WAL moved (it polls the flush position every few ms; there is
 *   no trigger to wake anyone). A pump that stores nothing writes nothing, so it moves no WAL.
 * - A slot keeps WAL until it is drained. It is dropped when the connection is deleted or no sync
 *   of it is on (`releaseLogicalCapture`); if the server invalidated it (max_slot_wal_keep_size),
 *   the pump makes a new one. Either way the *epoch* changes, and readers whose cursor carries the
 *   old epoch scan their table again: changes may have been lost, records never are.
 */

/** Prefix of the logical message that marks a transaction as Lockstep's own write. */
export const OWN_WRITE_PREFIX = 'lockstep.origin';
const LOCK = `hashtext('lockstep-logical-decoding')`;
/** Output rows decoded per pump at most (the slot stops after the transaction that reaches it). */
const PUMP_MAX_ROWS = 50_000;

type Client = pg.ClientBase;

/** `schema.table` as stored in lockstep.changes (a bare name is in `public`). */
export const changeTableName = (table: string) => (table.includes('.') ? table : `public.${table}`);

/** Marks the current transaction as Lockstep's own write (needs no privilege). */
export async function emitOwnWriteMark(client: Client) {
  await client.query(`select pg_logical_emit_message(true, '${OWN_WRITE_PREFIX}', 'lockstep')`);
}

/** The slot's name per connection (a pooled or listening connection asks every tick otherwise). */
const slotNames = new WeakMap<Client, string>();

async function slotName(client: Client): Promise<string> {
  const known = slotNames.get(client);
  if (known) return known;
  const r = await client.query(`select oid::text as oid from pg_database where datname = current_database()`);
  const name = `lockstep_${r.rows[0].oid}`;
  slotNames.set(client, name);
  return name;
}

/** Refuses, with what to do, a server or a user that cannot decode. Also run when a connection is made. */
export async function assertLogicalDecodingAvailable(client: Client) {
  const r = await client.query(
    `select current_setting('wal_level') as wal_level, r.rolreplication or r.rolsuper as may_replicate,
            current_user as "user"
       from pg_roles r where r.rolname = current_user`,
  );
  const row = r.rows[0] as { wal_level: string; may_replicate: boolean; user: string };
  if (row.wal_level !== 'logical')
    throw new ConnectorError(
      'validation',
      `wal_level is ${row.wal_level}`,
      `Logical decoding needs wal_level = logical on this PostgreSQL server (it is ${row.wal_level}). Set it and restart the server, or choose triggers for change capture.`,
    );
  if (!row.may_replicate)
    throw new ConnectorError(
      'permission_denied',
      `${row.user} has no REPLICATION attribute`,
      `Logical decoding needs a user allowed to use replication slots: run ALTER ROLE "${row.user}" REPLICATION as an administrator, or choose triggers for change capture.`,
    );
}

async function ensureDecodingTables(client: Client) {
  await ensureChangeTables(client);
  await client.query(`create table if not exists lockstep.decoding_tables (
    table_name text primary key, pk text not null, registered_at timestamptz not null default now())`);
  await client.query(`create table if not exists lockstep.decoding_state (
    slot_name text primary key, epoch text not null, confirmed_lsn pg_lsn not null)`);
}

/**
 * Makes the slot if it is missing or was invalidated, with a new epoch (a slot cannot be made in a
 * transaction that wrote, so this runs on its own, under the session lock).
 */
async function ensureSlot(client: Client, slot: string): Promise<string> {
  const found = await client.query(
    `select s.wal_status, d.epoch from pg_replication_slots s
       left join lockstep.decoding_state d on d.slot_name = s.slot_name where s.slot_name = $1`,
    [slot],
  );
  const row = found.rows[0] as { wal_status: string | null; epoch: string | null } | undefined;
  if (row && row.wal_status !== 'lost' && row.epoch) return row.epoch;
  if (row) await client.query('select pg_drop_replication_slot($1)', [slot]);
  const made = await client.query(
    `select lsn::text as lsn from pg_create_logical_replication_slot($1, 'test_decoding')`,
    [slot],
  );
  const epoch = randomUUID();
  await client.query(
    `insert into lockstep.decoding_state (slot_name, epoch, confirmed_lsn) values ($1, $2, $3::pg_lsn)
       on conflict (slot_name) do update set epoch = excluded.epoch, confirmed_lsn = excluded.confirmed_lsn`,
    [slot, epoch, made.rows[0].lsn],
  );
  return epoch;
}

async function withSessionLock<T>(client: Client, work: () => Promise<T>): Promise<T> {
  await client.query(`select pg_advisory_lock(${LOCK})`);
  try {
    return await work();
  } finally {
    await client.query(`select pg_advisory_unlock(${LOCK})`).catch(() => {});
  }
}

/**
 * Starts decoding a table's changes (a reader's first read): the slot made if needed, the table
 * registered. Under the pump's lock, so no pump in flight can drop a change of it made after this
 * returns. Answers the epoch to keep in the cursor.
 */
export async function registerLogicalCapture(client: Client, table: string, primaryKey: string) {
  await assertLogicalDecodingAvailable(client);
  await ensureDecodingTables(client);
  return withSessionLock(client, async () => {
    const epoch = await ensureSlot(client, await slotName(client));
    await client.query(
      `insert into lockstep.decoding_tables (table_name, pk) values ($1, $2)
         on conflict (table_name) do update set pk = excluded.pk`,
      [changeTableName(table), primaryKey],
    );
    return epoch;
  });
}

/** The epoch of the database's slot now (null: no slot; a reader must register again). */
export async function currentEpoch(client: Client): Promise<string | null> {
  const has = await client.query(`select to_regclass('lockstep.decoding_state') is not null as ok`);
  if (!has.rows[0]?.ok) return null;
  const r = await client.query(
    `select d.epoch from lockstep.decoding_state d
       join pg_replication_slots s on s.slot_name = d.slot_name and s.wal_status is distinct from 'lost'
      where d.slot_name = $1`,
    [await slotName(client)],
  );
  return (r.rows[0]?.epoch as string | undefined) ?? null;
}

/**
 * Drains what the slot decoded into lockstep.changes (registered tables only, Lockstep's own
 * transactions skipped), NOTIFYs each changed table, then advances the slot. Answers the changes
 * stored; 0 when nothing is registered. A lost slot is made again (new epoch).
 */
export async function pumpDecodedChanges(client: Client, maxRows = PUMP_MAX_ROWS): Promise<number> {
  const hasState = await client.query(`select to_regclass('lockstep.decoding_state') is not null as ok`);
  if (!hasState.rows[0]?.ok) return 0;
  const slot = await slotName(client);
  return withSessionLock(client, async () => {
    const state = (
      await client.query(
        `select confirmed_lsn::text as lsn from lockstep.decoding_state where slot_name = $1`,
        [slot],
      )
    ).rows[0] as { lsn: string } | undefined;
    if (!state) return 0;
    const slotRow = (
      await client.query(
        `select wal_status, confirmed_flush_lsn::text as confirmed, pg_current_wal_flush_lsn()::text as upto
           from pg_replication_slots where slot_name = $1`,
        [slot],
      )
    ).rows[0] as { wal_status: string | null; confirmed: string; upto: string } | undefined;
    if (!slotRow || slotRow.wal_status === 'lost') {
      await ensureSlot(client, slot);
      return 0;
    }
    // Decoded up to the WAL flushed now: every transaction whose commit starts before it is in
    // this peek (unless the row limit cuts it short), so the slot may move past it afterwards.
    const upto = slotRow.upto;
    // Nothing written anywhere on the server since the last drain: no peek (the listener asks often).
    if (compareLsn(upto, slotRow.confirmed) <= 0) return 0;
    const tables = new Map(
      (await client.query('select table_name, pk from lockstep.decoding_tables')).rows.map(
        (r: { table_name: string; pk: string }) => [r.table_name, r.pk],
      ),
    );
    const rows = (
      await client.query(
        `select lsn::text as lsn, xid::text as xid, data
           from pg_logical_slot_peek_changes($1, $2::pg_lsn, $3, 'include-xids', '0', 'skip-empty-xacts', '1')`,
        [slot, upto, maxRows],
      )
    ).rows as { lsn: string; xid: string; data: string }[];
    // `confirmed_lsn` is the end of the last transaction stored: one ending at or before it was
    // stored already (peeked again after a crash before the slot moved) and is skipped.
    const found = collectChanges(rows, tables, state.lsn);
    const stored = found.lastCommit ?? state.lsn;
    const advanceTo = rows.length < maxRows ? maxLsn(upto, stored) : stored;
    // Nothing to store (other tables, Lockstep's own writes, other databases): no write at all, so
    // a drain that found nothing moves no WAL and does not wake the listener's WAL watch again.
    // `confirmed_lsn` only has to cover what was stored; the slot moving past the rest is enough.
    if (found.changes.length) {
      await client.query('begin');
      try {
        await client.query(
          `insert into lockstep.changes (table_name, pk, op)
             select t, p, o from unnest($1::text[], $2::text[], $3::text[]) with ordinality as u(t, p, o, n) order by n`,
          [found.changes.map((c) => c.table), found.changes.map((c) => c.pk), found.changes.map((c) => c.op)],
        );
        for (const t of new Set(found.changes.map((c) => c.table)))
          await client.query(`select pg_notify('lockstep_changes', $1)`, [t]);
        await client.query(
          'update lockstep.decoding_state set confirmed_lsn = $2::pg_lsn where slot_name = $1',
          [slot, stored],
        );
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
    }
    // After the commit: a crash before this line peeks the same transactions again, and skips them.
    await client.query(
      `select pg_replication_slot_advance($1, $2::pg_lsn)
        where (select confirmed_flush_lsn from pg_replication_slots where slot_name = $1) < $2::pg_lsn`,
      [slot, advanceTo],
    );
    return found.changes.length;
  });
}

/** Drops the slot and forgets the registered tables: nothing keeps WAL for Lockstep any more. */
export async function releaseLogicalCapture(client: Client): Promise<{ released: boolean }> {
  const slot = await slotName(client);
  return withSessionLock(client, async () => {
    const dropped = await client.query(
      `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1`,
      [slot],
    );
    const hasState = await client.query(`select to_regclass('lockstep.decoding_state') is not null as ok`);
    if (hasState.rows[0]?.ok) {
      await client.query('delete from lockstep.decoding_state where slot_name = $1', [slot]);
      await client.query('delete from lockstep.decoding_tables');
    }
    return { released: (dropped.rowCount ?? 0) > 0 };
  });
}

// ---------------------------------------------------------------------------------------------
// test_decoding's output, as far as change capture needs it: which row of which table, and how.

type Decoded =
  | { kind: 'begin' | 'commit' | 'other' }
  | { kind: 'message'; prefix: string }
  | {
      kind: 'change';
      table: string;
      op: 'I' | 'U' | 'D';
      row: Map<string, string | null>;
      oldKey: Map<string, string | null> | null;
    };

export type CapturedChange = { table: string; pk: string; op: 'I' | 'U' | 'D' };

/**
 * Groups decoded rows by transaction and keeps, for registered tables, each changed row's key
 * (an update that changed the key records the old key as gone too). Transactions marked as
 * Lockstep's own, or committed at or before `confirmed`, are skipped.
 */
export function collectChanges(
  rows: { lsn: string; xid: string; data: string }[],
  tables: Map<string, string>,
  confirmed: string,
): { changes: CapturedChange[]; lastCommit: string | null } {
  const changes: CapturedChange[] = [];
  let lastCommit: string | null = null;
  let pending: CapturedChange[] = [];
  let own = false;
  for (const row of rows) {
    const d = parseDecodedLine(row.data);
    if (d.kind === 'begin') {
      pending = [];
      own = false;
    } else if (d.kind === 'message') {
      if (d.prefix === OWN_WRITE_PREFIX) own = true;
    } else if (d.kind === 'change') {
      const pk = tables.get(d.table);
      if (pk === undefined) continue;
      const key = d.row.get(pk);
      const oldKey = d.oldKey?.get(pk);
      if (oldKey !== undefined && oldKey !== null && oldKey !== key)
        pending.push({ table: d.table, pk: oldKey, op: 'D' });
      if (key !== undefined && key !== null) pending.push({ table: d.table, pk: key, op: d.op });
    } else if (d.kind === 'commit') {
      if (!own && compareLsn(row.lsn, confirmed) > 0) changes.push(...pending);
      lastCommit = row.lsn;
      pending = [];
    }
  }
  return { changes, lastCommit };
}

/** One line of test_decoding (include-xids off). */
export function parseDecodedLine(data: string): Decoded {
  if (data === 'BEGIN' || data.startsWith('BEGIN ')) return { kind: 'begin' };
  if (data === 'COMMIT' || data.startsWith('COMMIT ')) return { kind: 'commit' };
  if (data.startsWith('message: ')) {
    const m = /prefix: (.*?), sz: \d+ content:/s.exec(data);
    return { kind: 'message', prefix: m?.[1] ?? '' };
  }
  if (!data.startsWith('table ')) return { kind: 'other' };
  const p = { s: data, i: 'table '.length };
  const schema = readIdent(p, '.');
  p.i++; // '.'
  const name = readIdent(p, ':');
  p.i += 2; // ': '
  const opEnd = data.indexOf(':', p.i);
  const word = data.slice(p.i, opEnd);
  p.i = opEnd + 2;
  const op = word === 'INSERT' ? 'I' : word === 'UPDATE' ? 'U' : word === 'DELETE' ? 'D' : null;
  if (op === null || data.startsWith('(no-tuple-data)', p.i)) return { kind: 'other' };
  let oldKey: Map<string, string | null> | null = null;
  if (data.startsWith('old-key: ', p.i)) {
    p.i += 'old-key: '.length;
    oldKey = readTuple(p, 'new-tuple: ');
    p.i += 'new-tuple: '.length;
  }
  return { kind: 'change', table: `${schema}.${name}`, op, row: readTuple(p, null), oldKey };
}

type Pos = { s: string; i: number };

/** An identifier as quote_identifier prints it: "double ""quoted""" or bare up to `stop`. */
function readIdent(p: Pos, stop: string): string {
  if (p.s[p.i] === '"') {
    let out = '';
    p.i++;
    for (;;) {
      const q = p.s.indexOf('"', p.i);
      if (q < 0) throw new Error(`unterminated identifier in: ${p.s}`);
      out += p.s.slice(p.i, q);
      p.i = q + 1;
      if (p.s[p.i] === '"') {
        out += '"';
        p.i++;
      } else return out;
    }
  }
  const end = p.s.indexOf(stop, p.i);
  const out = p.s.slice(p.i, end);
  p.i = end;
  return out;
}

/** `name[type]:value` items up to `until` (a marker at an item boundary) or the end. */
function readTuple(p: Pos, until: string | null): Map<string, string | null> {
  const out = new Map<string, string | null>();
  while (p.i < p.s.length) {
    if (until && p.s.startsWith(until, p.i)) break;
    const name = readIdent(p, '[');
    const typeEnd = p.s.indexOf(']:', p.i);
    if (typeEnd < 0) throw new Error(`no column type in: ${p.s}`);
    p.i = typeEnd + 2;
    let value: string | null;
    if (p.s[p.i] === "'") {
      value = '';
      p.i++;
      for (;;) {
        const q = p.s.indexOf("'", p.i);
        if (q < 0) throw new Error(`unterminated value in: ${p.s}`);
        value += p.s.slice(p.i, q);
        p.i = q + 1;
        if (p.s[p.i] === "'") {
          value += "'";
          p.i++;
        } else break;
      }
    } else {
      const sp = p.s.indexOf(' ', p.i);
      const end = sp < 0 ? p.s.length : sp;
      const raw = p.s.slice(p.i, end);
      p.i = end;
      value = raw === 'null' ? null : raw;
    }
    out.set(name, value);
    if (p.s[p.i] === ' ') p.i++;
  }
  return out;
}

/** Compares two `X/Y` LSNs. */
export function compareLsn(a: string, b: string): number {
  const n = (l: string) => {
    const [hi, lo] = l.split('/');
    return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
  };
  const d = n(a) - n(b);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
}

const maxLsn = (a: string, b: string) => (compareLsn(a, b) >= 0 ? a : b);
