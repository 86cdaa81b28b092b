import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { requestAppWebhooks } from '../../jobs/refresh-app-webhooks';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { assertPlanAllows } from '../../services/plan-guard';
import { announceSyncsChanged } from '../../sync/postgres-change-listener';

/** Switches on again, and runs at once, the syncs "pause all" switched off. */
export function resumeAllSyncs(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/resume-all',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Resume the syncs that "pause all" paused',
        response: { 200: z.object({ resumed: z.number().int() }) },
      },
    },
    async (request) => {
      const owner = principalOf(request).userId;
      // Switching on counts as activating: an expired plan or a full record limit refuses it.
      await assertPlanAllows(ctx.db, owner, 'activate', ctx.config.environment === 'local');
      const now = new Date();
      const rows = await ctx.db
        .updateTable('core_base')
        .set({ sync_state: 'on', sync_state_changed_at: now, paused_all_at: null, updated_at: now })
        .where('owner_id', '=', owner)
        .where('paused_all_at', 'is not', null)
        .where('sync_state', '=', 'off')
        .returning('id')
        .execute();
      for (const r of rows) {
        await requestSyncRun(ctx.boss, r.id, 'activated', PRIORITY.user);
        await requestAppWebhooks(ctx.boss, r.id);
      }
      if (rows.length > 0) await announceSyncsChanged(ctx.db).catch(() => {});
      return { resumed: rows.length };
    },
  );
}
