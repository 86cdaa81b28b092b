import { Paged, SyncLog, SyncLogQuery } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { syncLogsPage, syncLogsQuery, toSyncLog } from '../../services/sync-logs';

export function listSyncLogs(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-logs',
    {
      schema: {
        tags: ['sync-logs'],
        summary: 'Sync runs (operations), newest first, paged; filter by sync, status and time',
        querystring: SyncLogQuery,
        response: { 200: Paged(SyncLog) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { skip, take, coreBaseId, status, from, to } = request.query;
      if (coreBaseId) await findCoreBase(ctx.db, principal, coreBaseId);
      const filter = { coreBaseId, ownerId: principal.userId, status, from, to };
      const [rows, total] = await Promise.all([
        syncLogsPage(ctx.db, filter, skip, take).execute(),
        syncLogsQuery(ctx.db, filter)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toSyncLog), total: Number(total.n), skip, take };
    },
  );
}
