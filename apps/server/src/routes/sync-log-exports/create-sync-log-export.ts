import { CreateSyncLogExportBody, SyncLogExport } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { exportQuery } from '../../services/sync-log-exports';
import { Params, toExport } from './params';

export function createSyncLogExport(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/sync-log-exports',
    {
      schema: {
        tags: ['sync-log-exports'],
        summary: "Create an export of a sync's operations (CSV or JSON)",
        params: Params,
        body: CreateSyncLogExportBody,
        response: { 201: SyncLogExport },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { format, filters } = request.body;
      const count = await exportQuery(ctx.db, base.id, filters)
        .select((eb) => eb.fn.sum<number>('record_count').as('n'))
        .executeTakeFirstOrThrow();
      const row = await ctx.db
        .insertInto('sync_log_export')
        .values({
          owner_id: base.owner_id,
          core_base_id: base.id,
          format,
          filters: JSON.stringify(filters),
          status: 'COMPLETED',
          row_count: Number(count.n),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toExport(row));
    },
  );
}
