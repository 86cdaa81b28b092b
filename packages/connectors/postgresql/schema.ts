import type { FieldType } from '@lockstep/engine';
import type pg from 'pg';
import { ConnectorError } from '../sdk/connector';

export type PgField = {
  remoteId: string;
  name: string;
  fieldType: FieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
  pgType: string;
};
export type PgTable = {
  remoteId: string;
  name: string;
  primaryKey: string[];
  fields: PgField[];
  extras: Record<string, unknown>;
};

/** PostgreSQL types in canonical terms; anything unknown is json (read as its JSON form). */
export function canonicalType(dataType: string, udt: string, isEnum: boolean): FieldType {
  if (isEnum) return 'single_select';
  switch (udt) {
    case 'int2':
    case 'int4':
    case 'int8':
    case 'numeric':
    case 'float4':
    case 'float8':
    case 'oid':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'timestamp':
    case 'timestamptz':
      return 'datetime';
    case 'json':
    case 'jsonb':
      return 'json';
    case '_text':
    case '_varchar':
      return 'multi_select';
    case 'text':
    case 'varchar':
    case 'bpchar':
    case 'citext':
    case 'uuid':
    case 'name':
      return 'text';
    default:
      return dataType === 'ARRAY' ? 'json' : 'text';
  }
}

/** Tables of one schema with their columns, primary keys, enums, generated columns and foreign keys. */
/**
 * Refuses PostgreSQL's own schemas and Lockstep's change-capture schema: never a user's data, and
 * attaching one would let a sync read or write the catalog (pg_catalog, pg_toast, pg_temp_*,
 * information_schema) or Lockstep's bookkeeping (lockstep).
 */
export function assertUserSchema(schema: string) {
  const name = schema.trim().toLowerCase();
  if (name.startsWith('pg_') || name === 'information_schema' || name === 'lockstep') {
    throw new ConnectorError(
      'validation',
      `system schema ${schema} refused`,
      `"${schema}" is a system schema, not your data. Pick a schema that holds your own tables.`,
    );
  }
}

export async function discoverTables(client: pg.Pool | pg.PoolClient, schema: string): Promise<PgTable[]> {
  const cols = await client.query(
    `select c.table_name, c.column_name, c.data_type, c.udt_name, c.is_generated, c.identity_generation, c.is_nullable, c.column_default, c.datetime_precision,
            t.typtype = 'e' as is_enum,
            (select array_agg(e.enumlabel::text order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid) as enum_labels
       from information_schema.columns c
       join information_schema.tables tb on tb.table_schema = c.table_schema and tb.table_name = c.table_name and tb.table_type = 'BASE TABLE'
       left join pg_type t on t.typname = c.udt_name and t.typnamespace = (select oid from pg_namespace where nspname = c.udt_schema)
      where c.table_schema = $1
      order by c.table_name, c.ordinal_position`,
    [schema],
  );
  const pks = await client.query(
    `select tc.table_name, kcu.column_name
       from information_schema.table_constraints tc
       join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
      where tc.table_schema = $1 and tc.constraint_type = 'PRIMARY KEY'
      order by kcu.ordinal_position`,
    [schema],
  );
  const fks = await client.query(
    `select kcu.table_name, kcu.column_name, ccu.table_schema as ref_schema, ccu.table_name as ref_table, ccu.column_name as ref_column
       from information_schema.table_constraints tc
       join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
       join information_schema.constraint_column_usage ccu on ccu.constraint_name = tc.constraint_name and ccu.constraint_schema = tc.table_schema
      where tc.table_schema = $1 and tc.constraint_type = 'FOREIGN KEY'`,
    [schema],
  );
  const tables = new Map<string, PgTable>();
  for (const c of cols.rows as Record<string, unknown>[]) {
    const name = String(c.table_name);
    let t = tables.get(name);
    if (!t) {
      t = { remoteId: `${schema}.${name}`, name, primaryKey: [], fields: [], extras: {} };
      tables.set(name, t);
    }
    const fk = (fks.rows as Record<string, unknown>[]).find(
      (f) => f.table_name === name && f.column_name === c.column_name,
    );
    const isEnum = c.is_enum === true;
    const fieldType = canonicalType(String(c.data_type), String(c.udt_name), isEnum);
    t.fields.push({
      remoteId: String(c.column_name),
      name: String(c.column_name),
      fieldType,
      // Generated and always-identity columns are computed by the database: read-only.
      readOnly: c.is_generated === 'ALWAYS' || c.identity_generation === 'ALWAYS',
      options: {
        ...(isEnum ? { choices: c.enum_labels } : {}),
        ...(fk ? { references: `${fk.ref_schema}.${fk.ref_table}.${fk.ref_column}` } : {}),
        nullable: c.is_nullable === 'YES',
        // A NOT NULL column the database fills for no one: a row without a value here is refused.
        ...(c.is_nullable === 'NO' &&
        c.column_default === null &&
        c.identity_generation === null &&
        c.is_generated !== 'ALWAYS'
          ? { required: true }
          : {}),
        // The fraction digits the column holds (6 unless declared, as timestamptz(3)): the engine
        // compares with another app's date-times at the precision both hold.
        ...(fieldType === 'datetime' && c.datetime_precision !== null
          ? { datetimeDigits: Number(c.datetime_precision) }
          : {}),
      },
      pgType: String(c.udt_name),
    });
  }
  for (const pk of pks.rows as Record<string, unknown>[])
    tables.get(String(pk.table_name))?.primaryKey.push(String(pk.column_name));
  // A foreign key to the single primary key of a table in this schema holds record ids of that
  // table: a linked-record field (its values map through the links of the linked table's mapping).
  for (const t of tables.values()) {
    for (const f of t.fields) {
      const ref = typeof f.options.references === 'string' ? f.options.references.split('.') : null;
      const target = ref && ref[0] === schema ? tables.get(String(ref[1])) : undefined;
      if (target && target.primaryKey.length === 1 && target.primaryKey[0] === ref?.[2])
        f.fieldType = 'relations';
    }
  }
  for (const t of tables.values()) {
    if (t.primaryKey.length !== 1) {
      t.extras.unsyncable =
        t.primaryKey.length === 0
          ? 'This table has no primary key, so its rows cannot be told apart. Add a primary key to sync it.'
          : 'Tables with a composite primary key are not supported yet.';
    }
    t.extras.primaryKey = t.primaryKey;
  }
  return [...tables.values()];
}
