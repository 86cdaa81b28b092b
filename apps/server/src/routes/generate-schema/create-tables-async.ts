import { CreateTablesAsyncResponse, CreateTablesBody, GenerateSchemaParams } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { GENERATE_SCHEMA, type GenerateSchemaData } from '../../jobs/generate-schema';
import { planCreateTables } from '../../services/generate-schema';
import { createProgress } from '../../services/progress';

/**
 * Spec section 7, POST /rest/generate-schema/{externalBaseId}/create-tables-async: create-tables as
 * a job. Answers 202 with a tracker at once (the app, ownership and the tables are checked first,
 * so bad input is a 4xx in the envelope, not a failed tracker); the tracker
 * moves table by table and ends with the created tables, or with why it failed.
 */
export function createTablesAsyncRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/:externalBaseId/create-tables-async',
    {
      schema: {
        tags: ['mappings'],
        summary: "Create the other app's tables in this app, in the background (a progress tracker)",
        params: GenerateSchemaParams,
        body: CreateTablesBody,
        response: { 202: CreateTablesAsyncResponse },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // Bad input is refused now, in the envelope, not later in the tracker.
      const { dest, plan } = await planCreateTables(
        ctx,
        principal,
        request.params.externalBaseId,
        request.body.sourceTableIds,
      );
      const sourceTableIds = plan.map((p) => p.table.id);
      const tracker = await createProgress(ctx.db, dest.owner_id, 'create_tables', sourceTableIds.length);
      const data: GenerateSchemaData = {
        trackingId: tracker.id,
        principal,
        externalBaseId: dest.id,
        sourceTableIds,
      };
      await ctx.boss.send(GENERATE_SCHEMA, data);
      return reply.status(202).send({ trackingId: tracker.id });
    },
  );
}
