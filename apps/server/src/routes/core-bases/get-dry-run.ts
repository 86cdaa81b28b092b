import { DryRunAnswer, type DryRunPass, DryRunQuery, type DryRunTablePair } from '@lockstep/contract';
import { sql } from 'kysely';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const progressOf = (p: { pairs?: number; pairsDone?: number; pages?: number } | null, pairs: number) => ({
  pairs: p?.pairs ?? pairs,
  pairsDone: p?.pairsDone ?? 0,
  pages: p?.pages ?? 0,
});

export function getDryRun(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/dry-run',
    {
      schema: {
        tags: ['core-bases'],
        summary:
          'The latest dry pass of a sync: its status, counts by table pair and kind, and its planned writes',
        description:
          'Planned writes are paged (`skip`, `take`) and may be filtered by table pair (`tableMappingId`) and `kind`. Each names the record, the side it would be written on, and the fields with their value before (what Lockstep last synced) and after.',
        params: CoreBaseIdParams,
        querystring: DryRunQuery,
        response: { 200: DryRunAnswer },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { skip, take, tableMappingId, kind } = request.query;
      // The plan shown is the latest finished pass's (it stays while a newer pass reads); a newer
      // pass queued or running is `next`.
      const [newest, finished] = await Promise.all(
        [false, true].map((onlyFinished) => {
          let q = ctx.db.selectFrom('dry_run').selectAll().where('core_base_id', '=', base.id);
          if (onlyFinished) q = q.where('status', 'not in', ['queued', 'running']);
          return q.orderBy('created_at', 'desc').limit(1).executeTakeFirst();
        }),
      );
      const row = finished ?? newest;
      const next =
        newest && row && newest.id !== row.id
          ? { id: newest.id, status: newest.status, progress: progressOf(newest.progress, 0) }
          : null;
      const empty = { total: 0, skip, take, items: [] };
      if (!row) return { dryRunMode: base.dry_run, pass: null, next: null, writes: empty };

      const pairs = await ctx.db
        .selectFrom('table_mapping as tm')
        .innerJoin('external_table as l', 'l.id', 'tm.left_table_id')
        .innerJoin('external_table as r', 'r.id', 'tm.right_table_id')
        .select(['tm.id', 'l.name as left', 'r.name as right'])
        .where('tm.core_base_id', '=', base.id)
        .orderBy('tm.created_at')
        .execute();
      const counts = row.counts ?? {};
      const tablePairs: DryRunTablePair[] = pairs.map((p) => ({
        tableMappingId: p.id,
        leftTable: p.left,
        rightTable: p.right,
        create: counts[`${p.id}:create`] ?? 0,
        update: counts[`${p.id}:update`] ?? 0,
        delete: counts[`${p.id}:delete`] ?? 0,
      }));
      const pass: DryRunPass = {
        id: row.id,
        status: row.status,
        trigger: row.trigger,
        error: row.error,
        progress: progressOf(row.progress, pairs.length),
        total: counts.total ?? 0,
        tablePairs,
        createdAt: iso(row.created_at) as string,
        startedAt: iso(row.started_at),
        finishedAt: iso(row.finished_at),
      };

      let q = ctx.db.selectFrom('dry_run_write').where('dry_run_id', '=', row.id);
      if (tableMappingId) q = q.where('table_mapping_id', '=', tableMappingId);
      if (kind) q = q.where('operation', '=', kind);
      const [{ n }, items] = await Promise.all([
        q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
        q
          .selectAll()
          // Grouped by table pair (in the order the pairs were made), then as planned.
          .orderBy(sql`array_position(${sql.val(pairs.map((p) => p.id))}::uuid[], table_mapping_id)`)
          .orderBy('id')
          .offset(skip)
          .limit(take)
          .execute(),
      ]);
      return {
        dryRunMode: base.dry_run,
        pass,
        next,
        writes: {
          total: Number(n),
          skip,
          take,
          items: items.map((w) => ({
            id: String(w.id),
            tableMappingId: w.table_mapping_id,
            side: w.side,
            kind: w.operation,
            recordId: w.remote_id,
            sourceId: w.source_id,
            name: w.name,
            fields: w.fields,
            conflicts: w.conflicts,
          })),
        },
      };
    },
  );
}
