import { type ConnectorType, connectorDisplayName } from '@lockstep/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { ConnectionProblem } from '../../connectors/connector-port';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findConnection, openSecrets } from '../../services/external-connections';
import { ConnectionParams } from './params';

export function deleteExternalConnection(app: RestApp, ctx: AppContext) {
  app.delete(
    '/external-connections/:id',
    {
      schema: {
        tags: ['connections'],
        summary: 'Delete a connection that no sync uses',
        params: ConnectionParams,
        response: { 200: z.object({ deleted: z.literal(true), warning: z.string().optional() }) },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.params.id);
      const used = await ctx.db
        .selectFrom('external_base')
        .innerJoin('core_base', 'core_base.id', 'external_base.core_base_id')
        .select('core_base.name')
        .where('external_base.external_connection_id', '=', row.id)
        .execute();
      if (used.length > 0) {
        throw new HttpError(
          409,
          'Connection in use',
          `This connection is used by ${used.map((u) => `"${u.name}"`).join(', ')}. Delete or change those syncs first.`,
          'conflict',
        );
      }
      // A blended table reading this connection would break: it is edited or deleted first.
      const blends = await ctx.db
        .selectFrom('blended_table')
        .select('name')
        .where('owner_id', '=', row.owner_id)
        .where(sql<boolean>`config->'sources' @> ${JSON.stringify([{ connectionId: row.id }])}::jsonb`)
        .execute();
      if (blends.length > 0) {
        throw new HttpError(
          409,
          'Connection in use by blended tables',
          `This connection is a source of the blended table${blends.length === 1 ? '' : 's'} ${blends.map((b) => `"${b.name}"`).join(', ')}. Delete ${blends.length === 1 ? 'it' : 'them'} first.`,
          'conflict',
        );
      }
      // Best effort: what connecting set up in the app is undone first (Supabase: Lockstep's role
      // is dropped); if the app refuses (a revoked token, say), the connection is still deleted and
      // the answer says what is left to remove by hand.
      let warning: string | null = null;
      const port = ctx.connectors.get(row.type as ConnectorType);
      if (port?.onConnectionDeleted) {
        try {
          warning = (await port.onConnectionDeleted(openSecrets(ctx, row).connectionItems)).leftBehind;
        } catch (error) {
          const why = error instanceof ConnectionProblem ? error.userFacingMessage : 'an unexpected error';
          request.log.warn({ err: error, connectionId: row.id }, 'undoing the connection in the app failed');
          warning = `Lockstep could not remove what it set up in ${connectorDisplayName(row.type as ConnectorType)} (${why}). Remove its access there by hand.`;
        }
      }
      await ctx.db.deleteFrom('external_connection').where('id', '=', row.id).execute();
      return { deleted: true as const, ...(warning ? { warning } : {}) };
    },
  );
}
