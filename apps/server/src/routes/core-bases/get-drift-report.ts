import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

const TableDrift = z.object({
  tableMappingId: Uuid,
  linked: z.number().int(),
  onlyLeft: z.number().int(),
  onlyRight: z.number().int(),
  syncDisabled: z.number().int(),
  pendingDeletes: z.number().int(),
  openIssues: z.number().int(),
});

/**
 * Drift of a sync, per table pair, from what Lockstep knows (its links): records in step on both
 * sides, records present on one side only (not created yet, or held), switched-off records,
 * deletes waiting for approval and open issues. It never calls the apps, so it is cheap to poll.
 */
export function getDriftReport(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/drift-report',
    {
      schema: {
        tags: ['core-bases'],
        summary:
          'Record counts per table pair: linked, on one side only, switched off, deletes held, open issues',
        params: CoreBaseIdParams,
        response: { 200: z.object({ tables: z.array(TableDrift), otherIssues: z.number().int() }) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const links = await ctx.db
        .selectFrom('core_meta_record')
        .where('core_base_id', '=', base.id)
        .where('table_mapping_id', 'is not', null)
        .select((eb) => [
          'table_mapping_id',
          eb.fn
            .countAll<string>()
            .filterWhere(
              eb.and([eb('left_remote_id', 'is not', null), eb('right_remote_id', 'is not', null)]),
            )
            .as('linked'),
          eb.fn
            .countAll<string>()
            .filterWhere(eb.and([eb('left_remote_id', 'is not', null), eb('right_remote_id', 'is', null)]))
            .as('only_left'),
          eb.fn
            .countAll<string>()
            .filterWhere(eb.and([eb('left_remote_id', 'is', null), eb('right_remote_id', 'is not', null)]))
            .as('only_right'),
          eb.fn.countAll<string>().filterWhere('sync_disabled', '=', true).as('disabled'),
        ])
        .groupBy('table_mapping_id')
        .execute();
      const approvals = await ctx.db
        .selectFrom('delete_approval')
        .innerJoin('core_meta_record', 'core_meta_record.id', 'delete_approval.core_meta_record_id')
        .where('delete_approval.core_base_id', '=', base.id)
        .where('delete_approval.status', '=', 'pending')
        .select((eb) => ['core_meta_record.table_mapping_id', eb.fn.countAll<string>().as('n')])
        .groupBy('core_meta_record.table_mapping_id')
        .execute();
      const issues = await ctx.db
        .selectFrom('sync_error')
        .leftJoin('core_meta_record', 'core_meta_record.id', 'sync_error.core_meta_record_id')
        .where('sync_error.core_base_id', '=', base.id)
        .where('sync_error.status', '!=', 'resolved')
        .select((eb) => ['core_meta_record.table_mapping_id', eb.fn.countAll<string>().as('n')])
        .groupBy('core_meta_record.table_mapping_id')
        .execute();
      const mappings = await ctx.db
        .selectFrom('table_mapping')
        .select('id')
        .where('core_base_id', '=', base.id)
        .orderBy('created_at')
        .execute();
      return {
        tables: mappings.map((m) => {
          const l = links.find((x) => x.table_mapping_id === m.id);
          return {
            tableMappingId: m.id,
            linked: Number(l?.linked ?? 0),
            onlyLeft: Number(l?.only_left ?? 0),
            onlyRight: Number(l?.only_right ?? 0),
            syncDisabled: Number(l?.disabled ?? 0),
            pendingDeletes: Number(approvals.find((a) => a.table_mapping_id === m.id)?.n ?? 0),
            openIssues: Number(issues.find((i) => i.table_mapping_id === m.id)?.n ?? 0),
          };
        }),
        // Issues of the sync as a whole (a broken connection, a dropped table), not of one record.
        otherIssues: Number(issues.find((i) => i.table_mapping_id === null)?.n ?? 0),
      };
    },
  );
}
