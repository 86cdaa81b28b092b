import { SyncPreview } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { checkPreviewTables, startPreview } from '../../services/sync-previews';

/**
 * Staff start a preview of a user's sync, as the owner's own create does (same checks, same
 * download); the preview stays the owner's and records which staff member asked for it.
 */
export function createInternalSyncPreview(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-preview/internal',
    {
      config: { staff: true },
      schema: {
        tags: ['sync-preview', 'staff'],
        summary:
          "Start a preview of any user's sync, as its owner would; the preview records the staff member who asked (staff)",
        body: z.strictObject({
          coreBaseId: z.string().uuid(),
          coreTableIds: z.array(z.string().uuid()).max(100).default([]),
        }),
        response: {
          201: SyncPreview.extend({ ownerId: z.string(), requestedBy: z.string() }),
        },
      },
    },
    async (request, reply) => {
      const staff = requireStaff(request);
      const base = await findCoreBase(ctx.db, staff, request.body.coreBaseId);
      await checkPreviewTables(ctx.db, base.id, request.body.coreTableIds);
      const preview = await startPreview(ctx.db, ctx.boss, base, request.body.coreTableIds, staff.userId);
      request.log.info(
        { previewId: preview.id, coreBaseId: base.id, ownerId: base.owner_id, requestedBy: staff.userId },
        'staff started a sync preview for a user',
      );
      return reply.status(201).send({ ...preview, ownerId: base.owner_id, requestedBy: staff.userId });
    },
  );
}
