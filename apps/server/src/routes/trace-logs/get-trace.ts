import { TraceLog } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { nest, toTraceLog } from './list-trace-logs';

export function getTrace(app: RestApp, ctx: AppContext) {
  app.get(
    '/trace-log/:coreBaseId/:traceLogId',
    {
      schema: {
        tags: ['trace-logs'],
        summary: 'Every event of one trace, oldest first, optionally nested',
        params: z.object({ coreBaseId: z.string().uuid(), traceLogId: z.string().min(1).max(100) }),
        querystring: z.object({ nestEvents: z.enum(['true', 'false']).default('false') }),
        response: { 200: z.object({ traceId: z.string(), events: z.array(TraceLog) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      let q = ctx.db
        .selectFrom('trace_log')
        .selectAll()
        .where('core_base_id', '=', request.params.coreBaseId)
        .where('trace_id', '=', request.params.traceLogId);
      if (!principal.staff) q = q.where('owner_id', '=', principal.userId);
      const rows = await q.orderBy('created_at').orderBy('id').limit(5000).execute();
      if (rows.length === 0) throw notFound('Trace');
      const events = rows.map(toTraceLog);
      return {
        traceId: request.params.traceLogId,
        events: request.query.nestEvents === 'true' ? nest(events) : events,
      };
    },
  );
}
