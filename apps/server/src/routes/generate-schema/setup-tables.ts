import { GenerateSchemaParams, SetupTablesResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { setUpTables } from '../../services/generate-schema';

/**
 * Spec section 7, POST /rest/generate-schema/setup/tables/{externalBaseId}: every table of this app
 * without a partner is created in the sync's other app and mapped; tables mapped already or refused
 * are listed as skipped, with why.
 */
export function setupTablesRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/setup/tables/:externalBaseId',
    {
      schema: {
        tags: ['mappings'],
        summary: 'Create every unmapped table of this app in the other app and map them',
        params: GenerateSchemaParams,
        response: { 201: SetupTablesResponse },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await setUpTables(ctx, principalOf(request), request.params.externalBaseId, null)),
  );
}
