import { SyncPreview } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { checkPreviewTables, startPreview } from '../../services/sync-previews';

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
      await checkPreviewTables(ctx.db, base.id, request.body.coreTableIds);
      return reply.status(201).send(await startPreview(ctx.db, ctx.boss, base, request.body.coreTableIds));
    },
  );
}
