import type { FieldType } from '@lockstep/engine';
import type pg from 'pg';
import { DropTolerantClient, mapPgError, type PgConnectionItems, poolConfig, quoteIdent } from './connection';
import { assertUserSchema } from './schema';

/**
 * Schema generation on PostgreSQL (spec section 7, /rest/generate-schema): new tables and new
 * columns for fields of the other app, typed from canonical field types so discovery reads them
 * back as the same (or a compatible) type. Identifiers are quoted, so names keep their spelling.
 */

export type NewColumn = {
  name: string;
  type: FieldType;
  options?: { choices?: string[]; currencyDigits?: number };
};
export type NewTable = { name: string; columns: NewColumn[] };

/** PostgreSQL's identifier limit, in bytes. */
const MAX_IDENT_BYTES = 63;

/** A usable identifier: trimmed, never empty, cut to 63 bytes without splitting a character. */
export function identifier(name: string, fallback: string): string {
  let s = name.trim().replaceAll('\u0000', '');
  if (s === '') s = fallback;
  while (Buffer.byteLength(s, 'utf8') > MAX_IDENT_BYTES) s = [...s].slice(0, -1).join('');
  return s;
}

/** Names made unique in one table, as PostgreSQL compares them (exactly, after the 63-byte cut). */
function uniqueNames(names: string[], taken: Iterable<string> = []): string[] {
  const used = new Set(taken);
  return names.map((n, i) => {
    const base = identifier(n, `field_${i + 1}`);
    let name = base;
    for (let k = 2; used.has(name); k++) name = identifier(`${base.slice(0, 58)}_${k}`, base);
    used.add(name);
    return name;
  });
}

/** The column type for a canonical field type; discovery maps each back (see schema.ts). */
export function pgColumnType(column: NewColumn): string {
  switch (column.type) {
    case 'number':
    case 'duration':
      return 'numeric';
    case 'currency': {
      const digits = column.options?.currencyDigits ?? 2;
      return `numeric(20, ${Math.max(0, Math.min(6, Math.trunc(digits)))})`;
    }
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'datetime':
      return 'timestamptz';
    case 'multi_select':
      return 'text[]';
    case 'attachments':
    case 'relations':
    case 'json':
      return 'jsonb';
    default:
      // text, rich_text, email, url, phone, single_select (text: new options never break a write)
      return 'text';
  }
}

/** The id column Lockstep needs to tell rows apart: an identity primary key, never written. */
export const primaryKeyName = (columnNames: string[]) => (columnNames.includes('id') ? 'lockstep_id' : 'id');

export type PlannedTable = { name: string; primaryKey: string; columns: { name: string; sql: string }[] };

/** CREATE TABLE for each new table, with quoted identifiers, in one schema. */
export function planCreateTables(
  schema: string,
  tables: NewTable[],
): { sql: string[]; tables: PlannedTable[] } {
  const tableNames = uniqueNames(tables.map((t) => t.name));
  const planned = tables.map((t, i): PlannedTable => {
    const names = uniqueNames(t.columns.map((c) => c.name));
    const primaryKey = primaryKeyName(names);
    return {
      name: tableNames[i] as string,
      primaryKey,
      columns: t.columns.map((c, j) => ({ name: names[j] as string, sql: pgColumnType(c) })),
    };
  });
  const sql = planned.map((t) => {
    const cols = [
      `${quoteIdent(t.primaryKey)} bigint generated always as identity primary key`,
      ...t.columns.map((c) => `${quoteIdent(c.name)} ${c.sql}`),
    ];
    return `create table ${quoteIdent(schema)}.${quoteIdent(t.name)} (\n  ${cols.join(',\n  ')}\n)`;
  });
  return { sql, tables: planned };
}

/** ALTER TABLE ... ADD COLUMN for fields the table lacks; names already in the table get a suffix. */
export function planAddColumns(
  schema: string,
  table: string,
  columns: NewColumn[],
  existingColumnNames: string[],
): { sql: string[]; columns: { name: string; sql: string }[] } {
  const names = uniqueNames(
    columns.map((c) => c.name),
    existingColumnNames,
  );
  const planned = columns.map((c, i) => ({ name: names[i] as string, sql: pgColumnType(c) }));
  return {
    sql: planned.map(
      (c) =>
        `alter table ${quoteIdent(schema)}.${quoteIdent(table)} add column ${quoteIdent(c.name)} ${c.sql}`,
    ),
    columns: planned,
  };
}

async function inTransaction<T>(
  items: PgConnectionItems,
  run: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new DropTolerantClient(poolConfig(items));
  try {
    await client.connect();
    await client.query('begin');
    const result = await run(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error instanceof Error && error.name === 'ConnectorError' ? error : mapPgError(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates the tables in one transaction: all of them, or none (an existing name fails the lot). */
export async function createTables(items: PgConnectionItems, schema: string, tables: NewTable[]) {
  assertUserSchema(schema);
  const plan = planCreateTables(schema, tables);
  return inTransaction(items, async (client) => {
    for (const statement of plan.sql) await client.query(statement);
    return plan.tables.map((t) => ({ remoteId: `${schema}.${t.name}`, ...t }));
  });
}

/** Adds the columns to one table in one transaction, next to the columns it has now. */
export async function addColumns(
  items: PgConnectionItems,
  schema: string,
  table: string,
  columns: NewColumn[],
) {
  return inTransaction(items, async (client) => {
    const existing = (
      await client.query(
        'select column_name from information_schema.columns where table_schema = $1 and table_name = $2',
        [schema, table],
      )
    ).rows.map((r) => String(r.column_name));
    if (existing.length === 0)
      throw mapPgError({ code: '42P01', message: `table ${schema}.${table} does not exist` });
    const plan = planAddColumns(schema, table, columns, existing);
    for (const statement of plan.sql) await client.query(statement);
    return plan.columns;
  });
}
