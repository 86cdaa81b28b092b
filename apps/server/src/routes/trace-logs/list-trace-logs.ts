import { Paged, PageQuery, TraceLog } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import { z } from 'zod';
import type { TraceLogTable } from '../../db/schema';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { iso } from '../../services/sync-logs';

type TraceLogView = z.infer<typeof TraceLog>;

export const toTraceLog = (r: Selectable<TraceLogTable>): TraceLogView => ({
  id: r.id,
  coreBaseId: r.core_base_id,
  traceId: r.trace_id,
  parentId: r.parent_id,
  event: r.event,
  data: r.data,
  createdAt: iso(r.created_at),
});

/** Nests events under their parent within the page; orphans (parent on another page) stay top-level. */
export function nest(rows: TraceLogView[]): TraceLogView[] {
  const byId = new Map(rows.map((r) => [r.id, { ...r, children: [] as unknown[] }]));
  const roots: TraceLogView[] = [];
  for (const r of byId.values()) {
    const parent = r.parentId ? byId.get(r.parentId) : undefined;
    if (parent) parent.children.push(r);
    else roots.push(r);
  }
  return roots;
}

export function listTraceLogs(app: RestApp, ctx: AppContext) {
  app.get(
    '/trace-log/:coreBaseId',
    {
      schema: {
        tags: ['trace-logs'],
        summary: 'Trace events of one sync, newest first; q searches events and data, from limits the time',
        params: z.object({ coreBaseId: z.string().uuid('must be a sync id (a UUID)') }),
        querystring: PageQuery.extend({
          q: z.string().max(200).optional(),
          traceId: z.string().max(100).optional(),
          from: z.iso.datetime({ offset: true }).optional(),
          nestEvents: z.enum(['true', 'false']).default('false'),
        }),
        response: { 200: Paged(TraceLog) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.coreBaseId);
      const { skip, take, q: text, traceId, from, nestEvents } = request.query;
      let q = ctx.db.selectFrom('trace_log').where('core_base_id', '=', base.id);
      if (traceId) q = q.where('trace_id', '=', traceId);
      if (from) q = q.where('created_at', '>=', new Date(from));
      if (text) {
        const pattern = `%${text.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;
        q = q.where(
          sql<boolean>`(event ilike ${pattern} or data::text ilike ${pattern} or trace_id = ${text})`,
        );
      }
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const items = rows.map(toTraceLog);
      return { items: nestEvents === 'true' ? nest(items) : items, total: Number(total.n), skip, take };
    },
  );
}
