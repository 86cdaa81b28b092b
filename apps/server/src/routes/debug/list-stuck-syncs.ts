import { IsoTimestamp, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { findStuckRuns } from '../../jobs/reap-stuck-syncs';

export function listStuckSyncs(app: RestApp, ctx: AppContext) {
  app.get(
    '/debug/stuck-syncs',
    {
      config: { staff: true },
      schema: {
        tags: ['debug', 'staff'],
        summary:
          'Runs still marked running past the limit with no job behind them (staff); the reaper frees them',
        response: {
          200: z.object({
            items: z.array(
              z.object({
                syncLogId: Uuid,
                coreBaseId: Uuid,
                ownerId: z.string(),
                trigger: z.string(),
                startedAt: IsoTimestamp,
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      requireStaff(request);
      const rows = await findStuckRuns(ctx.db);
      return {
        items: rows.map((r) => ({
          syncLogId: r.id,
          coreBaseId: r.core_base_id,
          ownerId: r.owner_id,
          trigger: r.trigger,
          startedAt: new Date(r.started_at).toISOString(),
        })),
      };
    },
  );
}
