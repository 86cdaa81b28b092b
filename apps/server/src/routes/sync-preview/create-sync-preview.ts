import { SyncPreview } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { requestPreviewStep } from '../../jobs/sync-preview-step';
import { findCoreBase } from '../../services/core-bases';
import { createProgress } from '../../services/progress';
import { toSyncPreview, transitionPreview } from '../../services/sync-previews';

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
      const tracker = await createProgress(ctx.db, base.owner_id, 'sync-preview');
      const row = await ctx.db
        .insertInto('sync_preview')
        .values({
          owner_id: base.owner_id,
          core_base_id: base.id,
          core_table_ids: JSON.stringify(request.body.coreTableIds),
          tracking_id: tracker.id,
          summary: '{}',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const started = await transitionPreview(ctx.db, row.id, 'new', 'downloading', 'server');
      await requestPreviewStep(ctx.boss, row.id, 'download');
      return reply.status(201).send(toSyncPreview(started));
    },
  );
}
