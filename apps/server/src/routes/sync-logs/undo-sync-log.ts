import { ErrorEnvelope } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { startUndo } from '../../jobs/undo-run';

export function undoSyncLog(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-logs/:id/undo',
    {
      schema: {
        tags: ['sync-logs'],
        summary: 'Undo this run: put back what it changed, in both apps, as a new run',
        description: [
          'Queues an undo of the run: in the app each of its operations wrote to, Lockstep writes what was there before',
          '(an update: the before-values of the fields it wrote; a create: the created record is deleted; a delete: the',
          'record is created again from its before-image), then carries those writes to the other app as it carries any',
          'edit, so each pair ends in step at its values before the run. The undo is a run of its own ("undo of run N",',
          'trigger `undo`, its own operations); follow it at GET /rest/sync-logs/{undoRunId}, whose `undoResults` say per',
          'record whether it was restored or held. A record changed since the run (in either app) is never overwritten:',
          'it is held, with an issue of code `undo_held` naming what differs. Owner only. 409 if the run was already',
          "undone, is still running, another undo of this sync is running, or the sync's first sync is running.",
        ].join(' '),
        params: z.object({ id: z.string().uuid('must be a sync log id (a UUID)') }),
        response: {
          202: z.object({ undoRunId: z.string().uuid() }),
          409: ErrorEnvelope.describe(
            'Not now: the run was already undone or is still running, another undo of this sync runs, or its first sync runs.',
          ),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const run = await ctx.db
        .selectFrom('sync_log')
        .select(['id', 'owner_id', 'core_base_id', 'status'])
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      // Owner only: another user (staff included) does not see it.
      if (!run || run.owner_id !== principal.userId) throw notFound('Sync log');
      const undoRunId = await startUndo(ctx.db, ctx.boss, run);
      return reply.status(202).send({ undoRunId });
    },
  );
}
