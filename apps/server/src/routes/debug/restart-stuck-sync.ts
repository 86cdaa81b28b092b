import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { notFound } from '../../http/http-error';
import { findStuckRuns } from '../../jobs/reap-stuck-syncs';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';

/**
 * Ends a stuck run (marked failed, as the reaper would) and queues the sync again at once; the new
 * run goes on from the stored cursors. Only a run that is stuck (running past the limit with no job
 * behind it) can be restarted: a live one is left alone.
 */
export function restartStuckSync(app: RestApp, ctx: AppContext) {
  app.post(
    '/debug/stuck-syncs/:syncLogId/restart',
    {
      config: { staff: true },
      schema: {
        tags: ['debug', 'staff'],
        summary: 'End a stuck run and queue its sync again (staff)',
        params: z.object({ syncLogId: z.string().uuid('must be a run id (a UUID)') }),
        response: { 200: z.object({ coreBaseId: Uuid, queued: z.boolean() }) },
      },
    },
    async (request) => {
      requireStaff(request);
      const stuck = (await findStuckRuns(ctx.db)).find((r) => r.id === request.params.syncLogId);
      if (!stuck) throw notFound('Stuck run');
      await ctx.db
        .updateTable('sync_log')
        .set({
          status: 'failed',
          finished_at: new Date(),
          error: 'Restarted by staff: the run had stopped responding.',
        })
        .where('id', '=', stuck.id)
        .where('status', '=', 'running')
        .execute();
      const id = await requestSyncRun(ctx.boss, stuck.core_base_id, 'restart', PRIORITY.user);
      return { coreBaseId: stuck.core_base_id, queued: id !== null };
    },
  );
}
