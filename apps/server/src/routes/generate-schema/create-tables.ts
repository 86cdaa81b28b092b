import { CreateTablesBody, CreateTablesResponse, GenerateSchemaParams } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { createTablesFromSource } from '../../services/generate-schema';

/**
 * Spec section 7, POST /rest/generate-schema/{externalBaseId}/create-tables: tables of the sync's
 * other app created in this app (PostgreSQL), with their fields typed from the canonical types and
 * an identity primary key; all in one transaction. The new schema is stored right away.
 */
export function createTablesRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/:externalBaseId/create-tables',
    {
      schema: {
        tags: ['mappings'],
        summary: "Create the other app's tables (and their fields) in this app",
        params: GenerateSchemaParams,
        body: CreateTablesBody,
        response: { 201: CreateTablesResponse },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          await createTablesFromSource(
            ctx,
            principalOf(request),
            request.params.externalBaseId,
            request.body.sourceTableIds,
          ),
        ),
  );
}
