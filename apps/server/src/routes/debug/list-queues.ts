import { IsoTimestamp } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { queueOverview } from '../../services/queue-overview';

const Queue = z.object({
  name: z.string(),
  created: z.number().int(),
  retry: z.number().int(),
  active: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  completedLastHour: z.number().int(),
  failedLastHour: z.number().int(),
  oldestWaitingAt: IsoTimestamp.nullable(),
});

export function listQueues(app: RestApp, ctx: AppContext) {
  app.get(
    '/debug/queues',
    {
      config: { staff: true },
      schema: {
        tags: ['debug', 'staff'],
        summary:
          'Every job queue with its jobs by state, its throughput over the last hour and its oldest waiting job, and the worker processes alive (staff)',
        response: { 200: z.object({ queues: z.array(Queue), workersAlive: z.number().int() }) },
      },
    },
    async (request) => {
      requireStaff(request);
      return queueOverview(ctx.db);
    },
  );
}
