import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { announceSyncsChanged } from '../../sync/postgres-change-listener';

/**
 * Pauses every sync of the signed-in user that is on (a run in progress ends after its chunk), and
 * remembers which, so "resume all" switches on exactly those.
 */
export function pauseAllSyncs(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/pause-all',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Pause every sync of the signed-in user that is on',
        response: { 200: z.object({ paused: z.number().int() }) },
      },
    },
    async (request) => {
      const now = new Date();
      const rows = await ctx.db
        .updateTable('core_base')
        .set({ sync_state: 'off', sync_state_changed_at: now, paused_all_at: now, updated_at: now })
        .where('owner_id', '=', principalOf(request).userId)
        .where('sync_state', '=', 'on')
        .returning('id')
        .execute();
      if (rows.length > 0) await announceSyncsChanged(ctx.db).catch(() => {});
      return { paused: rows.length };
    },
  );
}
