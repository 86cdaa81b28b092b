import { PageQuery, SyncLogDetail } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, canAccessOwner, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { toSyncLog, toSyncLogEntry } from '../../services/sync-logs';

export function getSyncLog(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-logs/:id',
    {
      schema: {
        tags: ['sync-logs'],
        summary: 'One run with what it changed (before and after values), entries paged',
        params: z.object({ id: z.string().uuid('must be a sync log id (a UUID)') }),
        querystring: PageQuery,
        response: { 200: SyncLogDetail },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await ctx.db
        .selectFrom('sync_log')
        .selectAll()
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Sync log');
      const { skip, take } = request.query;
      const q = ctx.db.selectFrom('sync_log_entry').where('sync_log_id', '=', row.id);
      const [entries, total, undo] = await Promise.all([
        q.selectAll().orderBy('created_at').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
        ctx.db.selectFrom('sync_log').select('id').where('undo_of', '=', row.id).executeTakeFirst(),
      ]);
      return {
        ...toSyncLog(row),
        undoneBy: undo?.id ?? null,
        entries: {
          items: entries.map(toSyncLogEntry),
          total: Number(total.n),
          skip,
          take,
        },
      };
    },
  );
}
