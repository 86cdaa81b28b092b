import { Paged, SyncLog, SyncLogQuery } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { toSyncLog } from '../../services/sync-logs';

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
      let q = ctx.db.selectFrom('sync_log');
      if (coreBaseId) {
        await findCoreBase(ctx.db, principal, coreBaseId);
        q = q.where('core_base_id', '=', coreBaseId);
      } else {
        q = q.where('owner_id', '=', principal.userId);
      }
      if (status) q = q.where('status', '=', status);
      if (from) q = q.where('started_at', '>=', new Date(from));
      if (to) q = q.where('started_at', '<', new Date(to));
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('started_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toSyncLog), total: Number(total.n), skip, take };
    },
  );
}
