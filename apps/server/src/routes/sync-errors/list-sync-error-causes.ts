import { Paged, SyncErrorCause, SyncErrorFilters, SyncErrorListQuery } from '@lockstep/contract';
import { sql } from 'kysely';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { mergeFilters } from '../../http/parse-json-query';
import { filteredSyncErrors } from '../../services/sync-errors';

/**
 * Issues grouped by cause, the largest first: 58 records refused for the same reason are one row
 * ("invalid value 'Lead' for lifecycle_stage: 58 records"), not 58. Each group's issues are listed
 * by GET /sync-errors with its coreBaseId, code, side and message as filters.
 */
export function listSyncErrorCauses(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-errors/by-cause',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'Issues grouped by cause (sync, code, side, table pair, message) with counts, largest first',
        querystring: SyncErrorListQuery,
        response: { 200: Paged(SyncErrorCause) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { skip, take, filters: json, ...typed } = request.query;
      const filters = mergeFilters('filters', json, typed, SyncErrorFilters, '{"status":"open"}');
      const tableMapping = sql<string | null>`details->>'tableMappingId'`;
      const grouped = (await filteredSyncErrors(ctx, principal, filters))
        .select((eb) => [
          'core_base_id',
          'code',
          'side',
          tableMapping.as('table_mapping_id'),
          'user_facing_message',
          eb.fn.countAll<string>().as('n'),
          eb.fn.max('updated_at').as('last_seen_at'),
          sql<
            { remoteId: string; name: string | null }[]
          >`(array_agg(json_build_object('remoteId', remote_id, 'name', details->>'recordName')
              order by updated_at desc) filter (where remote_id is not null))[1:5]`.as('records'),
        ])
        .groupBy(['core_base_id', 'code', 'side', tableMapping, 'user_facing_message']);
      const [rows, total] = await Promise.all([
        grouped.orderBy('n', 'desc').orderBy('last_seen_at', 'desc').offset(skip).limit(take).execute(),
        ctx.db
          .selectFrom(grouped.as('g'))
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          coreBaseId: r.core_base_id,
          code: r.code,
          side: (r.side as 'left' | 'right' | null) ?? null,
          tableMappingId: r.table_mapping_id,
          userFacingMessage: r.user_facing_message,
          count: Number(r.n),
          lastSeenAt: new Date(r.last_seen_at as unknown as string).toISOString(),
          remoteIds: (r.records ?? []).map((x) => x.remoteId),
          records: r.records ?? [],
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );
}
