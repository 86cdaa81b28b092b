import { SyncPreview, SyncPreviewStatus } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { requestPreviewStep } from '../../jobs/preview-step-queue';
import { assertPlanAllows } from '../../services/plan-guard';
import { cancelProgress, createProgress } from '../../services/progress';
import { findSyncPreview, toSyncPreview, transitionPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

export function patchSyncPreview(app: RestApp, ctx: AppContext) {
  app.patch(
    '/sync-preview/:id',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'Move a preview: downloading (again), planning (again), applying (apply it) or cancelled; other moves are refused',
        params: PreviewParams,
        body: z.strictObject({ id: z.string().uuid().optional(), status: SyncPreviewStatus }),
        response: { 200: SyncPreview },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const preview = await findSyncPreview(ctx.db, principal, request.params.id);
      const to = request.body.status;
      if (to === 'applying')
        await assertPlanAllows(ctx.db, preview.owner_id, 'activate', ctx.config.environment === 'local');
      let moved = await transitionPreview(
        ctx.db,
        preview.id,
        preview.status as SyncPreviewStatus,
        to,
        'client',
      );
      if (to === 'downloading' || to === 'planning' || to === 'applying') {
        // Each round of work reports its own progress (a finished tracker never moves again).
        const tracker = await createProgress(ctx.db, preview.owner_id, `sync-preview-${to}`);
        moved = await ctx.db
          .updateTable('sync_preview')
          .set({ tracking_id: tracker.id })
          .where('id', '=', preview.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      if (to === 'downloading') await requestPreviewStep(ctx.boss, preview.id, 'download');
      if (to === 'planning') await requestPreviewStep(ctx.boss, preview.id, 'plan');
      if (to === 'applying') await requestPreviewStep(ctx.boss, preview.id, 'apply');
      if (to === 'cancelled' && preview.tracking_id)
        await cancelProgress(ctx.db, principal, preview.tracking_id).catch(() => {});
      return toSyncPreview(moved);
    },
  );
}
