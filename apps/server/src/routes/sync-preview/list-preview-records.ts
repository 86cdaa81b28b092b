import { Paged, PageQuery, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

const PreviewRecord = z.object({
  externalTableId: Uuid,
  side: z.enum(['left', 'right']),
  remoteId: z.string(),
  fields: z.record(z.string(), z.unknown()),
  plan: z.string().nullable(),
  /** For a record the preview updates: each written field's value before and after. */
  changes: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])).nullable(),
});

export function listPreviewRecords(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id/records',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'Per-record preview: what applying will do to each downloaded record (create, update, conflict, unchanged), paged',
        params: PreviewParams,
        querystring: PageQuery.extend({
          side: z.enum(['left', 'right']).optional(),
          plan: z.string().max(40).optional(),
          externalTableId: z.string().uuid().optional(),
        }),
        response: { 200: Paged(PreviewRecord) },
      },
    },
    async (request) => {
      const preview = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      const { skip, take, side, plan, externalTableId } = request.query;
      let q = ctx.db.selectFrom('sync_preview_record').where('sync_preview_id', '=', preview.id);
      if (side) q = q.where('side', '=', side);
      if (plan) q = q.where('plan', '=', plan);
      if (externalTableId) q = q.where('external_table_id', '=', externalTableId);
      const [rows, total] = await Promise.all([
        q
          .select(['external_table_id', 'side', 'remote_id', 'fields', 'plan', 'changes'])
          .orderBy('id')
          .offset(skip)
          .limit(take)
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          externalTableId: r.external_table_id,
          side: r.side,
          remoteId: r.remote_id,
          fields: r.fields,
          plan: r.plan,
          changes: r.changes ?? null,
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );
}
