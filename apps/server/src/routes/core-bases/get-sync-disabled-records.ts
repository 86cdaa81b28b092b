import { IsoTimestamp, Paged, PageQuery, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

const DisabledRecord = z.object({
  id: z.string(),
  tableMappingId: Uuid.nullable(),
  leftRemoteId: z.string().nullable(),
  rightRemoteId: z.string().nullable(),
  updatedAt: IsoTimestamp,
});

export function getSyncDisabledRecords(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/sync-disabled-records',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Records of a sync whose syncing is switched off, paged',
        params: CoreBaseIdParams,
        querystring: PageQuery,
        response: { 200: Paged(DisabledRecord) },
      },
    },
    async (request) => {
      const row = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { skip, take } = request.query;
      const q = ctx.db
        .selectFrom('core_meta_record')
        .where('core_base_id', '=', row.id)
        .where('sync_disabled', '=', true);
      const [rows, total] = await Promise.all([
        q
          .select(['id', 'table_mapping_id', 'left_remote_id', 'right_remote_id', 'updated_at'])
          .orderBy('updated_at', 'desc')
          .orderBy('id')
          .offset(skip)
          .limit(take)
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          id: r.id,
          tableMappingId: r.table_mapping_id,
          leftRemoteId: r.left_remote_id,
          rightRemoteId: r.right_remote_id,
          updatedAt: new Date(r.updated_at).toISOString(),
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );
}
