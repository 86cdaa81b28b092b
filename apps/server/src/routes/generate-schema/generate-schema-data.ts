// @lockstep/connectors exports only postgresql/index.ts; create-schema is reached by path until
// that index re-exports it.
import type { SchemaColumn, SchemaTable } from '@lockstep/connectors';
import type { NewColumn } from '@lockstep/connectors/postgresql';
import { parseSupabaseBase, supabaseDatabaseItems } from '@lockstep/connectors/supabase';
import { type ConnectorType, connectorDisplayName } from '@lockstep/contract';
import { FIELD_TYPES, type FieldType } from '@lockstep/engine';
import type { Selectable } from 'kysely';
import type { ExternalColumnTable } from '../../db/schema';
import { resolveEmbeddedItems } from '../../demo/embedded-items';
import type { AppContext, Principal } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findExternalBase } from '../../services/external-bases';
import { callConnector, connectorFor, openSecrets, portContext } from '../../services/external-connections';

/** Databases get tables by SQL; the apps through their APIs (their ports' createTables/addFields). */
const DATABASES: readonly string[] = ['postgresql', 'supabase'];
const APPS: readonly string[] = ['airtable', 'notion', 'google_sheets'];
const SUPPORTED: readonly string[] = [...DATABASES, ...APPS];
export const isDatabase = (type: string) => DATABASES.includes(type);

/**
 * The app to create tables or fields in (the principal's, else 404), its connection items, and
 * the sync's other app, whose tables and fields are the sources.
 */
export async function loadDestination(ctx: AppContext, principal: Principal, externalBaseId: string) {
  const dest = await findExternalBase(ctx.db, principal, externalBaseId);
  if (!SUPPORTED.includes(dest.type)) {
    throw new HttpError(
      400,
      `Schema generation is not supported for ${dest.type}`,
      `Creating tables and fields in ${connectorDisplayName(dest.type as ConnectorType)} is not supported yet.`,
      'validation',
    );
  }
  const source = await ctx.db
    .selectFrom('external_base')
    .selectAll()
    .where('core_base_id', '=', dest.core_base_id)
    .where('side', '!=', dest.side)
    .executeTakeFirst();
  if (!source) {
    throw new HttpError(
      409,
      'The other side of the sync is not connected',
      'Connect an app on the other side of the sync first: its tables and fields are what gets created here.',
      'conflict',
    );
  }
  if (!dest.external_connection_id)
    throw new HttpError(409, 'No connection', 'Reconnect this app first.', 'conflict');
  const connection = await ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', dest.external_connection_id)
    .executeTakeFirstOrThrow();
  if (connection.status === 'broken') {
    throw new HttpError(
      409,
      'Connection broken',
      'The connection is broken; reconnect the app first.',
      'conflict',
    );
  }
  if (APPS.includes(dest.type)) {
    const type = dest.type as ConnectorType;
    const port = connectorFor(ctx, type);
    const secrets = openSecrets(ctx, connection).connectionItems;
    const context = portContext(ctx, connection);
    const app = {
      createTables: (tables: SchemaTable[]) =>
        callConnector(type, () => {
          if (!port.createTables) throw new Error(`${type} cannot create tables`);
          return port.createTables(secrets, dest.remote_id, tables, context);
        }),
      addFields: (tableRemoteId: string, columns: SchemaColumn[]) =>
        callConnector(type, () => {
          if (!port.addFields) throw new Error(`${type} cannot add fields`);
          return port.addFields(secrets, tableRemoteId, columns, context);
        }),
    };
    return { dest, source, items: {} as Record<string, string>, schema: dest.remote_id, app };
  }
  const items = resolveEmbeddedItems(openSecrets(ctx, connection).connectionItems, ctx.embeddedDatabaseUrl);
  // Supabase: PostgreSQL as Lockstep's role in the project; the base id is `<ref>:<schema>`.
  if (dest.type === 'supabase') {
    return {
      dest,
      source,
      items: supabaseDatabaseItems(items, ctx.config.supabase) as Record<string, string>,
      schema: parseSupabaseBase(dest.remote_id).schema,
      app: null,
    };
  }
  return { dest, source, items, schema: dest.remote_id, app: null };
}

const asType = (t: string): FieldType =>
  (FIELD_TYPES as readonly string[]).includes(t) ? (t as FieldType) : 'json';

/**
 * A source field as a new column, or null for fields that hold the source app's own record ids
 * (its primary key, foreign keys): their values mean nothing in the new table.
 */
export function toNewColumn(
  column: Selectable<ExternalColumnTable>,
  primaryKey: unknown,
): (NewColumn & SchemaColumn) | null {
  if (column.options.removed === true) return null;
  if (Array.isArray(primaryKey) && primaryKey.length === 1 && primaryKey[0] === column.remote_id) return null;
  if (typeof column.options.references === 'string') return null;
  const o = column.options;
  const options: NonNullable<SchemaColumn['options']> = {
    ...(typeof o.currencyDigits === 'number' ? { currencyDigits: o.currencyDigits } : {}),
    ...(typeof o.currencyCode === 'string' ? { currencyCode: o.currencyCode } : {}),
    ...(typeof o.precision === 'number' ? { precision: o.precision } : {}),
    ...(Array.isArray(o.choices) ? { choices: o.choices.map(String) } : {}),
  };
  return {
    name: column.name,
    type: asType(column.field_type),
    options: Object.keys(options).length > 0 ? options : undefined,
  };
}

/** A database's refusal as the API's error envelope (a duplicate name, no permission, unreachable). */
export function schemaError(error: unknown): never {
  const e = error as { name?: string; code?: string; message?: string; userFacingMessage?: string };
  if (e.name !== 'ConnectorError') throw error;
  const status =
    e.code === 'not_found' ? 404 : e.code === 'permission_denied' ? 403 : e.code === 'transient' ? 502 : 400;
  throw new HttpError(
    status,
    e.message ?? 'Schema change failed',
    e.userFacingMessage ?? String(e.message),
    e.code,
  );
}
