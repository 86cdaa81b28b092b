import { ApiTargetTablesBody, ApiTargetTablesResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { targetTables } from '../../services/api-import/target';
import { findConnection } from '../../services/external-connections';

export function apiImportTargetTables(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/target-tables',
    {
      schema: {
        tags: ['api-import'],
        summary: "The tables and fields of one of the user's connections' bases, to import into",
        body: ApiTargetTablesBody,
        response: { 200: ApiTargetTablesResponse },
      },
    },
    async (request) => {
      const connection = await findConnection(ctx.db, principalOf(request), request.body.connectionId);
      const tables = await targetTables(ctx, connection, request.body.baseRemoteId);
      return {
        tables: tables.map((t) => ({
          remoteId: t.remoteId,
          name: t.name,
          fields: t.fields.map(({ primaryKey: _pk, ...f }) => f),
        })),
      };
    },
  );
}
