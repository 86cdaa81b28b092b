import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type CanonicalValue, normalizeValue, type RecordData, valuesEqual } from '@lockstep/engine';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ReadPage, TableConnector, WriteOptions, WriteRequest, WriteResult } from '../sdk/connector';
import { appliedKeys, keepKeys } from './applied-writes';
import {
  changeHorizon,
  ensureChangeTables,
  hasCurrentChangeTables,
  installChangeCapture,
  pruneChangeLog,
  prunedPosition,
  prunedThrough,
} from './change-capture';

/** Changes after the position (`xid`, `since`) were pruned. */
async function prunedPast(client: pg.PoolClient, xid: string, since: string): Promise<boolean> {
  const pruned = await prunedPosition(client);
  if (!pruned) return false;
  const at = { xid: BigInt(xid), id: BigInt(since) };
  return pruned.xid > at.xid || (pruned.xid === at.xid && pruned.id > at.id);
}

import {
  mapPgError as mapPgErrorAs,
  type PgConnectionItems,
  type PgErrorOptions,
  poolConfig,
  qualified,
  quoteIdent,
} from './connection';
import {
  changeTableName,
  currentEpoch,
  emitOwnWriteMark,
  pumpDecodedChanges,
  registerLogicalCapture,
} from './logical-decoding';
import { discoverTables, type PgTable } from './schema';

/** `capture`: the logical-decoding epoch the cursor was made under (absent with triggers). */
/**
 * `xid`/`since`: the position in the change log, in commit order (transaction, then change id);
 * cursors made before commit-order reads hold `since` alone.
 */
type Cursor =
  | { mode: 'scan'; after: string | null; since: string; xid?: string; capture?: string }
  | { mode: 'changes'; since: string; xid?: string; capture?: string };
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
const decode = (s: string): Cursor => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Cursor;

/** A canonical value as a query parameter: JSON goes as text, the rest as pg sends it. */
function toParam(v: CanonicalValue): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'json' in v) return JSON.stringify(v.json);
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'minor' in v) return v.minor;
  return v;
}

/** The linked-record columns of a table (foreign keys to a primary key), by name. */
const relationColumns = (t: PgTable) =>
  new Set(t.fields.filter((f) => f.fieldType === 'relations').map((f) => f.remoteId));

function toRecord(row: Record<string, unknown>, pk: string, relations: Set<string>): RecordData {
  const fields: Record<string, CanonicalValue> = {};
  for (const [k, v] of Object.entries(row)) {
    // A foreign key holds one linked record: the list of one id (of the linked row's key as text).
    if (relations.has(k)) fields[k] = v === null || v === undefined ? null : [String(v)];
    else
      fields[k] =
        v !== null && typeof v === 'object' && !Array.isArray(v)
          ? ({ json: v } as CanonicalValue)
          : (v as CanonicalValue);
  }
  return { id: String(row[pk]), fields };
}

/** A linked-record value for a foreign key column: one id or none. */
function relationParam(v: CanonicalValue): unknown {
  if (v === null || v === undefined) return null;
  const ids = Array.isArray(v) ? v : [v];
  if (ids.length > 1)
    throw Object.assign(new Error(`a foreign key holds one linked record; ${ids.length} were given`), {
      code: '23514',
    });
  return ids[0] ?? null;
}

/** How often one connector prunes the change log (the first read of a cursor does it at once). */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** From this many creates of one column set on, a batch is loaded with COPY. */
const COPY_MIN_ROWS = 200;

/** A parameter value in COPY's text format: \N for null, arrays as literals, special characters escaped. */
export function copyText(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  return pgText(v).replace(/[\\\n\r\t]/g, (ch) =>
    ch === '\\' ? '\\\\' : ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : '\\t',
  );
}

function pgText(v: unknown): string {
  if (Array.isArray(v))
    return `{${v
      .map((e) =>
        e === null || e === undefined
          ? 'NULL'
          : `"${pgText(e).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`,
      )
      .join(',')}}`;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * Where a cursor of an older version (a change id only) goes on in commit order: from the oldest
 * transaction among the changes after that id, or from the horizon if none is there yet.
 */
async function positionOfLegacyCursor(client: pg.PoolClient, table: string, since: string) {
  const r = await client.query(
    `select least(
       (select min(xid) from lockstep.changes where table_name = $1 and id > $2::bigint),
       pg_snapshot_xmin(pg_current_snapshot()))::text as xid,
       exists (select 1 from lockstep.changes where table_name = $1 and id > $2::bigint) as found`,
    [changeTableName(table), since],
  );
  const row = r.rows[0] as { xid: string; found: boolean };
  return { xid: row.xid, since: row.found ? since : '0' };
}

/** The most rows of `gone` deleted by one transaction among these changes. */
function largestBatch(
  changes: { xid: string; pk: string; op: string; own: boolean }[],
  gone: Set<string>,
): number {
  const byXid = new Map<string, Set<string>>();
  for (const c of changes) {
    if (c.own || c.op !== 'D' || !gone.has(c.pk)) continue;
    const set = byXid.get(c.xid) ?? new Set<string>();
    set.add(c.pk);
    byXid.set(c.xid, set);
  }
  let most = 0;
  for (const set of byXid.values()) most = Math.max(most, set.size);
  return most;
}

/** Bind parameters per statement stay under PostgreSQL's limit of 65,535. */
const MAX_PARAMS = 60_000;

/** Each column's type as SQL can spell it in a cast (schema-qualified where the search path needs it). */
async function columnTypes(client: pg.PoolClient, table: string): Promise<Map<string, string>> {
  const r = await client.query(
    `select a.attname as name, format_type(a.atttypid, null) as type from pg_attribute a
      where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped`,
    [qualified(table)],
  );
  return new Map((r.rows as { name: string; type: string }[]).map((c) => [c.name, c.type]));
}

export type PostgresqlConnector = TableConnector & {
  describe(table: string): Promise<PgTable>;
  end(): Promise<void>;
};

/**
 * PostgreSQL as a sync side: full reads by keyset pagination on the primary key, then change
 * capture (trigger table, or logical decoding when the connection chose it; see
 * logical-decoding.ts) for incremental reads with delete events; batched writes in one
 * transaction with a savepoint per item (one bad row fails alone), post-images by RETURNING, and
 * idempotency keys stored in the same transaction so a retried create never duplicates.
 */
export function createPostgresqlConnector(
  items: PgConnectionItems,
  errors: PgErrorOptions = {},
): PostgresqlConnector {
  const mapPgError = (error: unknown) => mapPgErrorAs(error, errors);
  const pool = new pg.Pool(poolConfig(items));
  pool.on('error', () => {});
  const logical = items.changeCapture === 'logical';
  let lastPruned = 0;
  /** The database's change tables have this version's columns (checked once per connector). */
  let changeTablesCurrent = false;
  const described = new Map<string, PgTable>();
  const typed = new Map<string, Map<string, string>>();
  async function typesOf(client: pg.PoolClient, table: string) {
    let t = typed.get(table);
    if (!t) {
      t = await columnTypes(client, table);
      typed.set(table, t);
    }
    return t;
  }

  /** The table changed under us: described again at the next call. */
  function forget(table: string) {
    described.delete(table);
    typed.delete(table);
  }

  async function describe(table: string): Promise<PgTable> {
    const known = described.get(table);
    if (known) return known;
    const [schema, name] = table.includes('.') ? table.split('.', 2) : ['public', table];
    const found = (await discoverTables(pool, schema as string)).find((t) => t.name === name);
    if (!found) throw mapPgError({ code: '42P01', message: `table ${table} does not exist` });
    if (found.extras.unsyncable)
      throw mapPgError({ code: '23514', message: String(found.extras.unsyncable) });
    described.set(table, found);
    return found;
  }

  return {
    capabilities: {
      batchSize: 5000,
      incrementalRead: true,
      deleteDetection: 'events',
      webhooks: false,
      recordsCarryEveryField: true,
    },
    describe,
    end: () => pool.end(),

    async read(table, cursorText, { pageSize }): Promise<ReadPage> {
      try {
        const t = await describe(table);
        const pk = t.primaryKey[0] as string;
        const relations = relationColumns(t);
        const client = await pool.connect();
        try {
          let cursor = cursorText === null ? null : decode(cursorText);
          if (logical && cursor?.mode === 'changes') await pumpDecodedChanges(client);
          // A cursor made under another capture (the option changed, or the slot was dropped or
          // invalidated and made again) may have missed changes: the table is scanned again.
          if (cursor && Date.now() - lastPruned > PRUNE_EVERY_MS) {
            lastPruned = Date.now();
            // Housekeeping: a failure here must not fail the read.
            await pruneChangeLog(client).catch(() => {});
          }
          if (cursor) {
            const capture = logical ? ((await currentEpoch(client)) ?? undefined) : undefined;
            if (cursor.capture !== capture) cursor = null;
            else {
              if (!changeTablesCurrent) {
                if (!(await hasCurrentChangeTables(client))) await ensureChangeTables(client);
                changeTablesCurrent = true;
              }
              // Changes after the cursor were pruned (a reader away longer than the retention).
              if (
                cursor.xid === undefined
                  ? (await prunedThrough(client)) > BigInt(cursor.since)
                  : await prunedPast(client, cursor.xid, cursor.since)
              )
                cursor = null;
            }
          }
          if (cursor === null) {
            let epoch: string | undefined;
            if (logical) epoch = await registerLogicalCapture(client, table, pk);
            else await installChangeCapture(client, table, pk);
            changeTablesCurrent = true;
            // Every transaction below the horizon committed before the scan starts, so the scan sees
            // its rows; changes of the others are read after the scan (some twice, which is harmless).
            cursor = {
              mode: 'scan',
              after: null,
              since: '0',
              xid: await changeHorizon(client),
              capture: epoch,
            };
          }

          if (cursor.mode === 'scan') {
            const params: unknown[] = [pageSize + 1];
            const where = cursor.after === null ? '' : `where ${quoteIdent(pk)} > $2`;
            if (cursor.after !== null) params.push(cursor.after);
            const rows = (
              await client.query(
                `select * from ${qualified(table)} ${where} order by ${quoteIdent(pk)} limit $1`,
                params,
              )
            ).rows;
            const hasMore = rows.length > pageSize;
            const page = rows.slice(0, pageSize);
            const last = page.at(-1);
            const { since, xid, capture } = cursor;
            return {
              records: page.map((r) => toRecord(r, pk, relations)),
              deletedIds: [],
              hasMore,
              // Absence is evidence only when one page held the whole table.
              scanComplete: cursor.after === null && !hasMore,
              nextCursor: encode(
                hasMore && last
                  ? { mode: 'scan', after: String(last[pk]), since, xid, capture }
                  : { mode: 'changes', since, xid, capture },
              ),
            };
          }

          // A cursor of an older version holds a change id only: it goes on from the oldest
          // transaction of the changes after that id (the horizon if none).
          const position =
            cursor.xid === undefined ? await positionOfLegacyCursor(client, table, cursor.since) : cursor;
          // In commit order: (transaction, id) after the cursor, and only transactions below the
          // horizon (all finished). A change committed late has a lower transaction id than the ones
          // read before it but is still above the cursor's, because the cursor never passes the horizon.
          const found = (
            await client.query(
              // Ordered by the bigint column (c.id), not by the text alias `id`.
              `with h as (select pg_snapshot_xmin(pg_current_snapshot()) as x)
               select c.id::text as id, c.xid::text as xid, c.pk, c.op,
                      coalesce(c.origin = 'lockstep', false) as own, c.xid < h.x as ready
                 from lockstep.changes c, h
                where c.table_name = $1 and (c.xid, c.id) > ($2::xid8, $3::bigint)
                order by c.xid, c.id limit $4`,
              [changeTableName(table), position.xid, position.since, pageSize + 1],
            )
          ).rows as { id: string; xid: string; pk: string; op: string; own: boolean; ready: boolean }[];
          const ready = found.filter((c) => c.ready);
          const changes = ready.slice(0, pageSize);
          // Lockstep's own writes are skipped (the cursor still moves past them): their post-images
          // are already the shadows, so reading them back would only find echoes. A user's edit of
          // the same row has a change of its own and is read.
          const pks = [...new Set(changes.filter((c) => !c.own).map((c) => c.pk))];
          // Compared in the key's own type, so the primary key's index is used.
          const pkType = pks.length ? (await typesOf(client, table)).get(pk) : undefined;
          const rows = pks.length
            ? (
                await client.query(
                  `select * from ${qualified(table)} where ${quoteIdent(pk)} = any($1::${pkType}[])`,
                  [pks],
                )
              ).rows
            : [];
          const present = new Set(rows.map((r) => String(r[pk])));
          const last = changes.at(-1);
          const deletedIds = pks.filter((p) => !present.has(p));
          return {
            records: rows.map((r) => toRecord(r, pk, relations)),
            deletedIds,
            // Logical decoding stores each drain under the drain's own transaction: no per-user-
            // transaction count there, so the breaker counts the whole page.
            ...(logical ? {} : { largestDeleteBatch: largestBatch(changes, new Set(deletedIds)) }),
            hasMore: ready.length > pageSize,
            scanComplete: false,
            // Committed changes wait behind a transaction still running: read again soon (its end
            // may NOTIFY nothing, e.g. a transaction in another database of the same server).
            waiting: found.length > ready.length,
            nextCursor: encode({
              mode: 'changes',
              since: last?.id ?? position.since,
              xid: last?.xid ?? position.xid,
              capture: cursor.capture,
            }),
          };
        } finally {
          client.release();
        }
      } catch (error) {
        if (isSchemaGone(error)) forget(table);
        throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
      }
    },

    async readRecords(table, ids) {
      if (ids.length === 0) return [];
      try {
        const t = await describe(table);
        const pk = t.primaryKey[0] as string;
        // Compared as text: an id may come from the other side or an issue, in any form.
        const rows = await pool.query(
          `select * from ${qualified(table)} where ${quoteIdent(pk)}::text = any($1::text[])`,
          [ids],
        );
        return rows.rows.map((r) => toRecord(r, pk, relationColumns(t)));
      } catch (error) {
        if (isSchemaGone(error)) forget(table);
        throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
      }
    },

    async write(table, requests: WriteRequest[], options?: WriteOptions): Promise<WriteResult[]> {
      let client: pg.PoolClient;
      let t: PgTable;
      let types: Map<string, string>;
      try {
        t = await describe(table);
        // A field the cached description does not know: the table changed (a column renamed back,
        // say). Described again; a field still unknown fails the call rather than being dropped
        // from the write in silence (the shadow would then record a value the row never got).
        const unknownIn = (d: PgTable) => {
          const known = new Set(d.fields.map((f) => f.remoteId));
          return requests
            .flatMap((r) => (r.kind === 'delete' ? [] : Object.keys(r.fields)))
            .find((c) => !known.has(c));
        };
        if (unknownIn(t) !== undefined) {
          forget(table);
          t = await describe(table);
          const missing = unknownIn(t);
          if (missing !== undefined)
            throw mapPgError({ code: '42703', message: `column "${missing}" of ${table} does not exist` });
        }
        client = await pool.connect();
      } catch (error) {
        throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
      }
      const pk = t.primaryKey[0] as string;
      const relations = relationColumns(t);
      const writable = new Set(t.fields.filter((f) => !f.readOnly).map((f) => f.remoteId));
      const param = (r: Extract<WriteRequest, { kind: 'create' | 'update' }>, c: string) =>
        relations.has(c) ? relationParam(r.fields[c] ?? null) : toParam(r.fields[c] ?? null);
      const results: WriteResult[] = new Array(requests.length);
      const failed = (error: unknown): Extract<WriteResult, { ok: false }> => {
        const e = mapPgError(error);
        return {
          ok: false,
          error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage },
        };
      };
      const done = (remoteId: string, row: Record<string, unknown> | undefined): WriteResult => ({
        ok: true,
        remoteId,
        postImage: row ? toRecord(row, pk, relations) : null,
      });
      const colsOf = (r: WriteRequest) =>
        r.kind === 'delete' ? [] : Object.keys(r.fields).filter((c) => writable.has(c));

      /** One item alone, under its own savepoint: the path a failing batch is narrowed down to. */
      async function single(i: number) {
        const r = requests[i] as WriteRequest;
        await client.query('savepoint item');
        try {
          let row: Record<string, unknown> | undefined;
          if (r.kind === 'create') {
            // Its key was looked up with the batch's (or is fresh); it is kept with the batch's at the end.
            const cols = colsOf(r);
            const sql = cols.length
              ? `insert into ${qualified(table)} (${cols.map(quoteIdent).join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')}) returning *`
              : `insert into ${qualified(table)} default values returning *`;
            row = (
              await client.query(
                sql,
                cols.map((c) => param(r, c)),
              )
            ).rows[0];
          } else if (r.kind === 'update') {
            const cols = colsOf(r);
            const sets = cols.map((c, i) => `${quoteIdent(c)} = $${i + 2}`).join(', ');
            row = cols.length
              ? (
                  await client.query(
                    `update ${qualified(table)} set ${sets} where ${quoteIdent(pk)}::text = $1 returning *`,
                    [r.remoteId, ...cols.map((c) => param(r, c))],
                  )
                ).rows[0]
              : (
                  await client.query(`select * from ${qualified(table)} where ${quoteIdent(pk)}::text = $1`, [
                    r.remoteId,
                  ])
                ).rows[0];
            if (!row) throw Object.assign(new Error(`row ${r.remoteId} not found`), { code: 'P0002' });
          } else {
            await client.query(`delete from ${qualified(table)} where ${quoteIdent(pk)}::text = $1`, [
              r.remoteId,
            ]);
          }
          await client.query('release savepoint item');
          results[i] = done(r.kind === 'create' ? String(row?.[pk]) : r.remoteId, row);
        } catch (error) {
          await client.query('rollback to savepoint item');
          // The table or a column is gone: every item would fail alike, so the whole call does.
          if (isSchemaGone(error)) throw error;
          results[i] = failed(error);
          // A create that collides with a row holding the same unique value (the same new key
          // inserted on both sides): say which row, so the runtime links the two instead.
          if (r.kind === 'create' && (error as { code?: string }).code === '23505') {
            const existing = await collidingRow(r, (error as { constraint?: string }).constraint);
            if (existing)
              results[i] = {
                ...failed(error),
                existingId: String(existing[pk]),
                current: toRecord(existing, pk, relations),
              };
          }
        }
      }

      /** The row that holds the unique values a create was refused for (by the index it broke). */
      async function collidingRow(
        r: Extract<WriteRequest, { kind: 'create' }>,
        constraint: string | undefined,
      ): Promise<Record<string, unknown> | undefined> {
        if (!constraint) return undefined;
        const cols = (
          await client.query(
            `select a.attname as name from pg_index x
               join pg_class i on i.oid = x.indexrelid
               join pg_attribute a on a.attrelid = x.indrelid and a.attnum = any(x.indkey)
              where i.relname = $1 and x.indrelid = $2::regclass and x.indisunique`,
            [constraint, qualified(table)],
          )
        ).rows.map((row: { name: string }) => row.name);
        if (cols.length === 0 || cols.some((c) => !(c in r.fields))) return undefined;
        const found = await client.query(
          `select * from ${qualified(table)} where ${cols.map((c, k) => `${quoteIdent(c)} = $${k + 1}::${types.get(c) ?? 'text'}`).join(' and ')} limit 1`,
          cols.map((c) => param(r, c)),
        );
        return found.rows[0];
      }

      /**
       * Compare-and-set: an update lands only if the row still holds, in the fields it writes, what
       * Lockstep last read (normalised as the engine compares). The rows are locked until commit, so
       * nothing changes between the check and the write; a changed or vanished row is answered with
       * `version_conflict` and what it holds now, and the runtime reconciles again.
       */
      async function checkExpected() {
        const guarded = requests.flatMap((r, i) =>
          r.kind !== 'create' && r.expected && Object.keys(r.expected).length > 0 && !results[i] ? [i] : [],
        );
        if (guarded.length === 0) return;
        const ids = [
          ...new Set(
            guarded.map(
              (i) => (requests[i] as Extract<WriteRequest, { kind: 'update' | 'delete' }>).remoteId,
            ),
          ),
        ].sort();
        const rows = (
          await client.query(
            `select * from ${qualified(table)} where ${quoteIdent(pk)} = any($1::${types.get(pk)}[])
              order by ${quoteIdent(pk)} for update`,
            [ids],
          )
        ).rows as Record<string, unknown>[];
        const byId = new Map(rows.map((row) => [String(row[pk]), row]));
        const specs = new Map(t.fields.map((f) => [f.remoteId, f]));
        for (const i of guarded) {
          const r = requests[i] as Extract<WriteRequest, { kind: 'update' | 'delete' }>;
          const row = byId.get(r.remoteId);
          // A row already gone needs no delete: done, as the delete path answers it.
          if (!row && r.kind === 'delete') continue;
          const current = row ? toRecord(row, pk, relations) : null;
          const changed = current
            ? Object.entries(r.expected ?? {}).flatMap(([f, want]) => {
                const spec = specs.get(f);
                if (!spec) return [];
                const now = normalizeValue(spec.fieldType, current.fields[f] ?? null, spec.options);
                return now.ok && valuesEqual(now.value, want) ? [] : [f];
              })
            : [];
          if (current && changed.length === 0) continue;
          const what = current ? `changed in ${changed.join(', ')}` : 'was deleted';
          results[i] = {
            ok: false,
            error: {
              code: 'version_conflict',
              message: `row ${r.remoteId} ${what} since it was read`,
              userFacingMessage: `The row ${what} while Lockstep was ${r.kind === 'delete' ? 'deleting' : 'writing'} it; it is compared again.`,
            },
            current,
          };
        }
      }

      /**
       * A group of items in one statement per kind under a savepoint; if the database refuses it,
       * the group is rolled back and split in halves until the refused item stands alone (so one bad
       * row fails alone in a few statements instead of costing every row a savepoint).
       */
      async function isolate(items: number[], batch: (items: number[]) => Promise<void>): Promise<void> {
        if (items.length === 0) return;
        if (items.length === 1) return single(items[0] as number);
        await client.query('savepoint batch');
        try {
          await batch(items);
          await client.query('release savepoint batch');
        } catch {
          await client.query('rollback to savepoint batch');
          await client.query('release savepoint batch');
          const mid = Math.ceil(items.length / 2);
          await isolate(items.slice(0, mid), batch);
          await isolate(items.slice(mid), batch);
        }
      }

      // Creates of one column set: multi-row INSERT ... RETURNING (rows come back in VALUES order),
      // then their idempotency keys in one statement. Results are set only once both succeed.
      const insertBatch = (cols: string[]) => async (items: number[]) => {
        const per = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
        const rows: Record<string, unknown>[] = [];
        // A bulk of creates (a first sync) goes through COPY into a staging table, then one
        // INSERT ... SELECT ... RETURNING: no bind parameters to send and parse one by one.
        if (items.length >= COPY_MIN_ROWS) rows.push(...(await copyInsert(cols, items)));
        else
          for (let s = 0; s < items.length; s += per) {
            const part = items.slice(s, s + per);
            const params: unknown[] = [];
            const tuples = part.map((i) => {
              const r = requests[i] as Extract<WriteRequest, { kind: 'create' }>;
              const start = params.length;
              for (const c of cols) params.push(param(r, c));
              return `(${cols.map((_, k) => `$${start + k + 1}`).join(',')})`;
            });
            const res = await client.query(
              `insert into ${qualified(table)} (${cols.map(quoteIdent).join(', ')}) values ${tuples.join(',')} returning *`,
              params,
            );
            rows.push(...res.rows);
          }
        if (rows.length !== items.length) throw new Error('insert returned a different number of rows');
        items.forEach((i, j) => {
          const row = rows[j] as Record<string, unknown>;
          results[i] = done(String(row[pk]), row);
        });
      };

      async function copyInsert(cols: string[], items: number[]): Promise<Record<string, unknown>[]> {
        const create = (i: number) => requests[i] as Extract<WriteRequest, { kind: 'create' }>;
        const tmp = await copyStaged(
          cols.map((c) => ({ type: types.get(c) ?? 'text', value: (i: number) => param(create(i), c) })),
          items,
        );
        const res = await client.query(
          `insert into ${qualified(table)} (${cols.map(quoteIdent).join(', ')})
             select ${cols.map((_, k) => `"__c${k}"`).join(', ')} from ${tmp} order by "__i" returning *`,
        );
        await client.query(`delete from ${tmp}`);
        return res.rows;
      }

      /** Updates from a COPY-staged table (`__c0` the key), rows tagged with their item's index. */
      async function copyUpdate(cols: string[], items: number[]): Promise<Record<string, unknown>[]> {
        const update = (i: number) => requests[i] as Extract<WriteRequest, { kind: 'update' }>;
        const tmp = await copyStaged(
          [
            { type: types.get(pk) as string, value: (i) => update(i).remoteId },
            ...cols.map((c) => ({ type: types.get(c) ?? 'text', value: (i: number) => param(update(i), c) })),
          ],
          items,
        );
        const res = await client.query(
          `update ${qualified(table)} as t set ${cols.map((c, k) => `${quoteIdent(c)} = v."__c${k + 1}"`).join(', ')}
             from ${tmp} as v where t.${quoteIdent(pk)} = v."__c0" returning v."__i" as "__lockstep_i", t.*`,
        );
        await client.query(`delete from ${tmp}`);
        return res.rows;
      }

      /**
       * A bulk's values through COPY into a session staging table of these column types (created
       * once per pooled connection, emptied at commit and after use): `__i` the item's index, then
       * the given columns as `__c0`... Answers the table's name.
       */
      async function copyStaged(
        columns: { type: string; value: (i: number) => unknown }[],
        items: number[],
      ): Promise<string> {
        const defs = columns.map((c, k) => `"__c${k}" ${c.type}`);
        const tmp = quoteIdent(
          `lockstep_copy_${createHash('sha1').update(defs.join(',')).digest('hex').slice(0, 16)}`,
        );
        await client.query(
          `create temp table if not exists ${tmp} ("__i" integer, ${defs.join(', ')}) on commit delete rows`,
        );
        const lines = items.map((i) => `${i}\t${columns.map((c) => copyText(c.value(i))).join('\t')}\n`);
        // Sent as one chunk: a chunk per line was a socket write per row (2 s of 100k rows).
        await pipeline(Readable.from([lines.join('')]), client.query(copyFrom(`copy ${tmp} from stdin`)));
        return tmp;
      }

      // Updates of one column set: UPDATE ... FROM (VALUES ...) with typed values, matched back by
      // index; a bulk (a 10,000-row edit) from a COPY-staged table instead of bind parameters.
      const updateBatch = (cols: string[]) => async (items: number[]) => {
        const per = Math.max(1, Math.floor(MAX_PARAMS / (cols.length + 2)));
        const byIndex = new Map<number, Record<string, unknown>>();
        const take = (rows: Record<string, unknown>[]) => {
          for (const row of rows) {
            const i = Number(row.__lockstep_i);
            delete row.__lockstep_i;
            byIndex.set(i, row);
          }
        };
        if (items.length >= COPY_MIN_ROWS) take(await copyUpdate(cols, items));
        else
          for (let s = 0; s < items.length; s += per) {
            const part = items.slice(s, s + per);
            const params: unknown[] = [];
            const tuples = part.map((i, j) => {
              const r = requests[i] as Extract<WriteRequest, { kind: 'update' }>;
              const start = params.length;
              params.push(i, r.remoteId, ...cols.map((c) => param(r, c)));
              const cast = (k: number, type: string) =>
                j === 0 ? `$${start + k + 1}::${type}` : `$${start + k + 1}`;
              return `(${[cast(0, 'integer'), cast(1, types.get(pk) as string), ...cols.map((c, k) => cast(k + 2, types.get(c) ?? 'text'))].join(',')})`;
            });
            const names = ['"__i"', '"__k"', ...cols.map((_, k) => `"__c${k}"`)];
            const res = await client.query(
              `update ${qualified(table)} as t set ${cols.map((c, k) => `${quoteIdent(c)} = v."__c${k}"`).join(', ')}
               from (values ${tuples.join(',')}) as v(${names.join(', ')})
              where t.${quoteIdent(pk)} = v."__k" returning v."__i" as "__lockstep_i", t.*`,
              params,
            );
            take(res.rows as Record<string, unknown>[]);
          }
        for (const i of items) {
          const r = requests[i] as Extract<WriteRequest, { kind: 'update' }>;
          const row = byIndex.get(i);
          results[i] = row
            ? done(r.remoteId, row)
            : failed(Object.assign(new Error(`row ${r.remoteId} not found`), { code: 'P0002' }));
        }
      };

      const deleteBatch = async (items: number[]) => {
        const ids = items.map((i) => (requests[i] as Extract<WriteRequest, { kind: 'delete' }>).remoteId);
        await client.query(
          `delete from ${qualified(table)} where ${quoteIdent(pk)} = any($1::${types.get(pk)}[])`,
          [ids],
        );
        for (const [j, i] of items.entries()) results[i] = done(ids[j] as string, undefined);
      };

      try {
        if (!changeTablesCurrent) {
          if (!(await hasCurrentChangeTables(client))) await ensureChangeTables(client);
          changeTablesCurrent = true;
        }
        types = await typesOf(client, table);
        await client.query('begin');
        // Our own writes are tagged, so change capture can tell them from the users' edits.
        await client.query(`set local lockstep.origin = 'lockstep'`);
        // Logical decoding cannot see that setting: a message in the transaction's WAL marks it.
        if (logical) await emitOwnWriteMark(client);

        // Creates and updates already applied (a retry after a crash or a timeout) are not written
        // again: a create returns the row it made, an update the row as it is now.
        const createKeys = requests.flatMap((r) => (r.kind !== 'delete' ? [r.idempotencyKey] : []));
        const applied =
          createKeys.length && !options?.freshKeys
            ? await appliedKeys(client, table, createKeys)
            : new Map<string, string>();
        if (applied.size) {
          const rows = (
            await client.query(
              `select * from ${qualified(table)} where ${quoteIdent(pk)}::text = any($1::text[])`,
              [[...new Set(applied.values())]],
            )
          ).rows as Record<string, unknown>[];
          const byPk = new Map(rows.map((row) => [String(row[pk]), row]));
          for (const [i, r] of requests.entries()) {
            const at = r.kind !== 'delete' ? applied.get(r.idempotencyKey) : undefined;
            if (at !== undefined) results[i] = done(at, byPk.get(at));
          }
        }

        await checkExpected();

        // Group the rest by kind and column set; an id or key seen twice goes alone, in order.
        const groups = new Map<string, number[]>();
        const alone: number[] = [];
        const seen = new Set<string>();
        for (const [i, r] of requests.entries()) {
          if (results[i]) continue;
          const id = r.kind === 'create' ? `k:${r.idempotencyKey}` : `r:${r.remoteId}`;
          if (seen.has(id)) {
            alone.push(i);
            continue;
          }
          seen.add(id);
          const cols = colsOf(r);
          if (r.kind !== 'delete' && cols.length === 0) {
            alone.push(i);
            continue;
          }
          const key = `${r.kind}\u0000${cols.join('\u0000')}`;
          const g = groups.get(key);
          if (g) g.push(i);
          else groups.set(key, [i]);
        }
        for (const [key, items] of groups) {
          const [kind, ...cols] = key.split('\u0000');
          if (kind === 'create') await isolate(items, insertBatch(cols));
          else if (kind === 'update') await isolate(items, updateBatch(cols));
          else await isolate(items, deleteBatch);
        }
        for (const i of alone) {
          const r = requests[i] as WriteRequest;
          // A second create with a key already applied in this batch returns that row.
          const first =
            r.kind === 'create' ? requests.findIndex((q) => q.idempotencyKey === r.idempotencyKey) : -1;
          const prior = first >= 0 && first !== i ? results[first] : undefined;
          if (prior?.ok) results[i] = prior;
          else await single(i);
        }
        // The keys of what this call wrote, in the same transaction. Updates leave theirs too (kept a
        // day, see pruneChangeLog): a run that crashed after this commit replays the update and learns
        // it landed, so it does not take a later edit of the row for a conflict with it.
        const kept = (kind: 'create' | 'update') => {
          const seen = new Set<string>();
          return requests.flatMap((r, i) => {
            const res = results[i];
            if (r.kind !== kind || !res?.ok || applied.has(r.idempotencyKey) || seen.has(r.idempotencyKey))
              return [];
            seen.add(r.idempotencyKey);
            return [{ key: r.idempotencyKey, pk: res.remoteId }];
          });
        };
        await keepKeys(client, table, 'c', kept('create'), options?.freshKeys === true);
        await keepKeys(client, table, 'u', kept('update'), options?.freshKeys === true);
        await client.query('commit');
        return results;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        if (isSchemaGone(error)) forget(table);
        throw mapPgError(error);
      } finally {
        client.release();
      }
    },
  };
}

/** A missing table or column (dropped or renamed), as opposed to a refused value. */
const isSchemaGone = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  'code' in error &&
  (error.code === '42P01' || error.code === '42703');
