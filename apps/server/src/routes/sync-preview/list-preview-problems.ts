import { Paged, PageQuery, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

const Problem = z.object({
  id: z.number(),
  tableMappingId: Uuid.nullable(),
  kind: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
});

export function listPreviewProblems(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id/problems',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'What the user must resolve or know before applying: duplicate keys, records without a key, no match field, values the other app cannot hold',
        params: PreviewParams,
        querystring: PageQuery.extend({
          kind: z
            .enum(['duplicate', 'missing_key', 'no_match_field', 'value', 'required_unmapped'])
            .optional(),
        }),
        response: { 200: Paged(Problem) },
      },
    },
    async (request) => {
      const preview = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      const { skip, take, kind } = request.query;
      let q = ctx.db.selectFrom('sync_preview_problem').where('sync_preview_id', '=', preview.id);
      if (kind) q = q.where('kind', '=', kind);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          id: Number(r.id),
          tableMappingId: r.table_mapping_id,
          kind: r.kind,
          message: r.message,
          details: r.details,
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );
}
