import { ApiAutomapBody, ApiAutomapResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { proposeMapping, targetTable } from '../../services/api-import/target';
import { findConnection } from '../../services/external-connections';

/** Automap's proposal from the API's fields to a target table, with the field to match ids on. */
export function apiImportAutomap(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/automap',
    {
      schema: {
        tags: ['api-import'],
        summary: "Proposed mapping of the API's fields to a table's fields, and the field to match ids on",
        body: ApiAutomapBody,
        response: { 200: ApiAutomapResponse },
      },
    },
    async (request) => {
      const { target, fields, idField, sampleRecords } = request.body;
      const connection = await findConnection(ctx.db, principalOf(request), target.connectionId);
      const table = await targetTable(ctx, connection, target.baseRemoteId, target.tableRemoteId);
      const proposal = proposeMapping(fields, idField, table, sampleRecords);
      return {
        ...proposal,
        targetFields: table.fields.map(({ primaryKey: _pk, ...f }) => f),
      };
    },
  );
}
