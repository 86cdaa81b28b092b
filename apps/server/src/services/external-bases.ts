import type { ConnectorType } from '@lockstep/contract';
import type { Db } from '../db/database';
import { type AppContext, canAccessOwner, type Principal } from '../http/context';
import { notFound } from '../http/http-error';
import { findCoreBase, toCoreBase } from './core-bases';
import { callConnector, connectorFor, openSecrets, portContext } from './external-connections';
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
    port.discoverSchema(
      openSecrets(ctx, connection).connectionItems,
      base.remote_id,
      portContext(ctx, connection),
    ),
  );
  return storeDiscoveredSchema(ctx.db, base, tables);
}

/** One attached app as the API shows it (with its tables and fields). */
export async function externalBaseView(
  ctx: AppContext,
  principal: Principal,
  base: { core_base_id: string; side: 'left' | 'right' },
) {
  const full = await toCoreBase(
    ctx.db,
    await findCoreBase(ctx.db, principal, base.core_base_id),
    'fullBaseSchema',
  );
  return (base.side === 'left' ? full.leftExternalBase : full.rightExternalBase) as NonNullable<
    typeof full.leftExternalBase
  >;
}
