import { SyncPreview } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findCoreBase } from '../../services/core-bases';
import { startPreview } from '../../services/sync-previews';

export function createSyncPreview(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-preview/create',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'Start a preview of the first sync: download both sides, match, and plan each record without writing',
        body: z.strictObject({
          coreBaseId: z.string().uuid(),
          coreTableIds: z.array(z.string().uuid()).max(100).default([]),
        }),
        response: { 201: SyncPreview },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.body.coreBaseId);
      const mappings = await ctx.db
        .selectFrom('table_mapping')
        .select('id')
        .where('core_base_id', '=', base.id)
        .execute();
      if (mappings.length === 0)
        throw new HttpError(
          400,
          'No table mappings',
          'Map at least one pair of tables before previewing.',
          'validation',
        );
      const unknown = request.body.coreTableIds.filter((id) => !mappings.some((m) => m.id === id));
      if (unknown.length)
        throw new HttpError(
          400,
          'Unknown table mappings',
          `These are not table mappings of this sync: ${unknown.join(', ')}.`,
          'validation',
        );
      return reply.status(201).send(await startPreview(ctx.db, ctx.boss, base, request.body.coreTableIds));
    },
  );
}
