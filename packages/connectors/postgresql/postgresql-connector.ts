import type { CanonicalValue, RecordData } from '@lockstep/engine';
import pg from 'pg';
import type { ReadPage, TableConnector, WriteRequest, WriteResult } from '../sdk/connector';
import { installChangeCapture, latestChangeId } from './change-capture';
import { mapPgError, type PgConnectionItems, poolConfig, qualified, quoteIdent } from './connection';
import { discoverTables, type PgTable } from './schema';

type Cursor = { mode: 'scan'; after: string | null; since: string } | { mode: 'changes'; since: string };
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
const decode = (s: string): Cursor => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Cursor;

/** A canonical value as a query parameter: JSON goes as text, the rest as pg sends it. */
function toParam(v: CanonicalValue): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'json' in v) return JSON.stringify(v.json);
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'minor' in v) return v.minor;
  return v;
}

function toRecord(row: Record<string, unknown>, pk: string): RecordData {
  const fields: Record<string, CanonicalValue> = {};
  for (const [k, v] of Object.entries(row)) {
    fields[k] =
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? ({ json: v } as CanonicalValue)
        : (v as CanonicalValue);
  }
  return { id: String(row[pk]), fields };
}

export type PostgresqlConnector = TableConnector & {
  describe(table: string): Promise<PgTable>;
  end(): Promise<void>;
};

/**
 * PostgreSQL as a sync side: full reads by keyset pagination on the primary key, then change
 * capture (trigger table) for incremental reads with delete events; batched writes in one
 * transaction with a savepoint per item (one bad row fails alone), post-images by RETURNING, and
 * idempotency keys stored in the same transaction so a retried create never duplicates.
 */
export function createPostgresqlConnector(items: PgConnectionItems): PostgresqlConnector {
  const pool = new pg.Pool(poolConfig(items));
  pool.on('error', () => {});
  const described = new Map<string, PgTable>();

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
    capabilities: { batchSize: 500, incrementalRead: true, deleteDetection: 'events', webhooks: false },
    describe,
    end: () => pool.end(),

    async read(table, cursorText, { pageSize }): Promise<ReadPage> {
      try {
        const t = await describe(table);
        const pk = t.primaryKey[0] as string;
        const client = await pool.connect();
        try {
          let cursor: Cursor;
          if (cursorText === null) {
            await installChangeCapture(client, table, pk);
            cursor = { mode: 'scan', after: null, since: await latestChangeId(client) };
          } else cursor = decode(cursorText);

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
            return {
              records: page.map((r) => toRecord(r, pk)),
              deletedIds: [],
              hasMore,
              // Absence is evidence only when one page held the whole table.
              scanComplete: cursor.after === null && !hasMore,
              nextCursor: encode(
                hasMore && last
                  ? { mode: 'scan', after: String(last[pk]), since: cursor.since }
                  : { mode: 'changes', since: cursor.since },
              ),
            };
          }

          const changes = (
            await client.query(
              `select id::text as id, pk, op from lockstep.changes where table_name = $1 and id > $2 order by id limit $3`,
              [table, cursor.since, pageSize],
            )
          ).rows as { id: string; pk: string; op: string }[];
          const pks = [...new Set(changes.map((c) => c.pk))];
          const rows = pks.length
            ? (
                await client.query(
                  `select * from ${qualified(table)} where ${quoteIdent(pk)}::text = any($1::text[])`,
                  [pks],
                )
              ).rows
            : [];
          const present = new Set(rows.map((r) => String(r[pk])));
          return {
            records: rows.map((r) => toRecord(r, pk)),
            deletedIds: pks.filter((p) => !present.has(p)),
            hasMore: changes.length === pageSize,
            scanComplete: false,
            nextCursor: encode({ mode: 'changes', since: changes.at(-1)?.id ?? cursor.since }),
          };
        } finally {
          client.release();
        }
      } catch (error) {
        throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
      }
    },

    async write(table, requests: WriteRequest[]): Promise<WriteResult[]> {
      let client: pg.PoolClient;
      let t: PgTable;
      try {
        t = await describe(table);
        client = await pool.connect();
      } catch (error) {
        throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
      }
      const pk = t.primaryKey[0] as string;
      const writable = new Set(t.fields.filter((f) => !f.readOnly).map((f) => f.remoteId));
      const results: WriteResult[] = [];
      try {
        await client.query('begin');
        // Our own writes are tagged, so change capture can tell them from the users' edits.
        await client.query(`set local lockstep.origin = 'lockstep'`);
        for (const r of requests) {
          await client.query('savepoint item');
          try {
            let row: Record<string, unknown> | undefined;
            if (r.kind === 'create') {
              const done = await client.query(
                'select pk from lockstep.applied_writes where idempotency_key = $1',
                [r.idempotencyKey],
              );
              if (done.rowCount) {
                row = (
                  await client.query(`select * from ${qualified(table)} where ${quoteIdent(pk)}::text = $1`, [
                    done.rows[0].pk,
                  ])
                ).rows[0];
              } else {
                const cols = Object.keys(r.fields).filter((c) => writable.has(c));
                const sql = cols.length
                  ? `insert into ${qualified(table)} (${cols.map(quoteIdent).join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')}) returning *`
                  : `insert into ${qualified(table)} default values returning *`;
                row = (
                  await client.query(
                    sql,
                    cols.map((c) => toParam(r.fields[c] ?? null)),
                  )
                ).rows[0];
                await client.query(
                  'insert into lockstep.applied_writes (idempotency_key, table_name, pk) values ($1, $2, $3)',
                  [r.idempotencyKey, table, String(row?.[pk])],
                );
              }
            } else if (r.kind === 'update') {
              const cols = Object.keys(r.fields).filter((c) => writable.has(c));
              const sets = cols.map((c, i) => `${quoteIdent(c)} = $${i + 2}`).join(', ');
              row = cols.length
                ? (
                    await client.query(
                      `update ${qualified(table)} set ${sets} where ${quoteIdent(pk)}::text = $1 returning *`,
                      [r.remoteId, ...cols.map((c) => toParam(r.fields[c] ?? null))],
                    )
                  ).rows[0]
                : (
                    await client.query(
                      `select * from ${qualified(table)} where ${quoteIdent(pk)}::text = $1`,
                      [r.remoteId],
                    )
                  ).rows[0];
              if (!row) throw Object.assign(new Error(`row ${r.remoteId} not found`), { code: '42P01' });
            } else {
              await client.query(`delete from ${qualified(table)} where ${quoteIdent(pk)}::text = $1`, [
                r.remoteId,
              ]);
            }
            await client.query('release savepoint item');
            results.push({
              ok: true,
              remoteId: r.kind === 'create' ? String(row?.[pk]) : r.remoteId,
              postImage: row ? toRecord(row, pk) : null,
            });
          } catch (error) {
            await client.query('rollback to savepoint item');
            const e = mapPgError(error);
            results.push({
              ok: false,
              error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage },
            });
          }
        }
        await client.query('commit');
        return results;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw mapPgError(error);
      } finally {
        client.release();
      }
    },
  };
}
