import type { ConnectorType } from '@lockstep/contract';
import type { Db } from '../db/database';
import { type AppContext, canAccessOwner, type Principal } from '../http/context';
import { notFound } from '../http/http-error';
import { callConnector, connectorFor, openSecrets } from './external-connections';
import { storeDiscoveredSchema } from './external-schema';

export async function findExternalBase(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('external_base').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Connected app');
  return row;
}

/** Reads the app's schema for one external base and stores it (tables and fields by stable id). */
export async function refreshExternalSchema(
  ctx: AppContext,
  base: {
    id: string;
    owner_id: string;
    type: string;
    remote_id: string;
    external_connection_id: string | null;
  },
) {
  if (!base.external_connection_id) throw notFound('Connection');
  const connection = await ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', base.external_connection_id)
    .executeTakeFirstOrThrow();
  const type = base.type as ConnectorType;
  const port = connectorFor(ctx, type);
  const tables = await callConnector(type, () =>
    port.discoverSchema(openSecrets(ctx, connection).connectionItems, base.remote_id),
  );
  return storeDiscoveredSchema(ctx.db, base, tables);
}
