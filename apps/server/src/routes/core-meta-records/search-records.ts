import { CoreMetaRecord, Paged, PageQuery } from '@lockstep/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { toCoreMetaRecord } from '../../services/core-meta-records';

export function searchRecords(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-meta-records/:id/search',
    {
      schema: {
        tags: ['records'],
        summary:
          "Search a sync's linked records by remote id or synced value; externalTableId narrows to one table",
        params: z.object({ id: z.string().uuid('must be a sync id (a UUID)') }),
        querystring: PageQuery.extend({
          query: z.string().max(200).default(''),
          externalTableId: z.string().uuid().optional(),
        }),
        response: { 200: Paged(CoreMetaRecord) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { query, externalTableId, skip, take } = request.query;
      let q = ctx.db.selectFrom('core_meta_record').where('core_meta_record.core_base_id', '=', base.id);
      if (externalTableId) {
        q = q.where((eb) =>
          eb.exists(
            eb
              .selectFrom('table_mapping')
              .select('table_mapping.id')
              .whereRef('table_mapping.id', '=', 'core_meta_record.table_mapping_id')
              .where((w) =>
                w.or([w('left_table_id', '=', externalTableId), w('right_table_id', '=', externalTableId)]),
              ),
          ),
        );
      }
      if (query.trim()) {
        const text = query.trim();
        const pattern = `%${text.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;
        q = q.where(
          sql<boolean>`(left_remote_id = ${text} or right_remote_id = ${text} or core_meta_record.id::text = ${text} or shadow::text ilike ${pattern})`,
        );
      }
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('updated_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toCoreMetaRecord), total: Number(total.n), skip, take };
    },
  );
}
