import { Paged, PageQuery, SyncError, SyncErrorFilters } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { parseJsonQuery } from '../../http/parse-json-query';
import { filteredSyncErrors, toSyncError } from '../../services/sync-errors';

export function listSyncErrors(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-errors',
    {
      schema: {
        tags: ['sync-errors'],
        summary:
          'Issues (sync errors), newest first, paged; filters as JSON (coreBaseId, status, code, side, message, search, tableMappingId)',
        querystring: PageQuery.extend({ filters: z.string().max(2000).optional() }),
        response: { 200: Paged(SyncError) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { skip, take } = request.query;
      const filters = parseJsonQuery(
        'filters',
        request.query.filters,
        SyncErrorFilters,
        '{"coreBaseId":"…"}',
      );
      const q = await filteredSyncErrors(ctx, principal, filters);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('updated_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toSyncError), total: Number(total.n), skip, take };
    },
  );
}
