import { Paged, SyncError, SyncErrorFilters, SyncErrorListQuery } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { mergeFilters } from '../../http/parse-json-query';
import { filteredSyncErrors, toSyncError } from '../../services/sync-errors';

export function listSyncErrors(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-errors',
    {
      schema: {
        tags: ['sync-errors'],
        summary:
          'Issues (sync errors), newest first, paged; filter by coreBaseId, status, code, side, message, search, tableMappingId',
        querystring: SyncErrorListQuery,
        response: { 200: Paged(SyncError) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { skip, take, filters: json, ...typed } = request.query;
      const filters = mergeFilters('filters', json, typed, SyncErrorFilters, '{"coreBaseId":"…"}');
      const q = await filteredSyncErrors(ctx, principal, filters);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('updated_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toSyncError), total: Number(total.n), skip, take };
    },
  );
}
