import { CoreMetaRecord, SyncError, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { notFound } from '../../http/http-error';
import { toCoreMetaRecord } from '../../services/core-meta-records';
import { findExternalBase } from '../../services/external-bases';
import { toSyncError } from '../../services/sync-errors';

/**
 * The records debug lookup (the /records-old page's query): from an app's own record id, the linked
 * record(s) it belongs to on its side of the sync, with the shadow, the other side's id and the issues
 * raised about it. A POST because the remote id is any string an app uses, not a path segment.
 */
export function findRecordDebug(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-meta-records/debug/find',
    {
      config: { staff: true },
      schema: {
        tags: ['records', 'debug', 'staff'],
        summary:
          "Find the linked record of an app's record id (externalBaseId, optional externalTableId, remoteRecordId): shadow, both ids and its issues (staff)",
        body: z.strictObject({
          externalBaseId: z.string().uuid(),
          externalTableId: z.string().uuid().optional(),
          remoteRecordId: z.string().min(1).max(500),
        }),
        response: {
          200: z.object({
            coreBaseId: Uuid,
            side: z.enum(['left', 'right']),
            items: z.array(CoreMetaRecord),
            issues: z.array(SyncError),
          }),
        },
      },
    },
    async (request) => {
      const staff = requireStaff(request);
      const { externalBaseId, externalTableId, remoteRecordId } = request.body;
      const base = await findExternalBase(ctx.db, staff, externalBaseId);
      if (externalTableId) {
        const table = await ctx.db
          .selectFrom('external_table')
          .select('id')
          .where('id', '=', externalTableId)
          .where('external_base_id', '=', base.id)
          .executeTakeFirst();
        if (!table) throw notFound('Table');
      }
      const idColumn = base.side === 'left' ? 'left_remote_id' : 'right_remote_id';
      const tableColumn = base.side === 'left' ? 'left_table_id' : 'right_table_id';
      let q = ctx.db
        .selectFrom('core_meta_record')
        .selectAll('core_meta_record')
        .where('core_meta_record.core_base_id', '=', base.core_base_id)
        .where(`core_meta_record.${idColumn}`, '=', remoteRecordId);
      if (externalTableId)
        q = q
          .innerJoin('table_mapping', 'table_mapping.id', 'core_meta_record.table_mapping_id')
          .where(`table_mapping.${tableColumn}`, '=', externalTableId);
      const rows = await q.orderBy('core_meta_record.created_at').limit(50).execute();
      const ids = rows.map((r) => r.id);
      const issues = await ctx.db
        .selectFrom('sync_error')
        .selectAll()
        .where('core_base_id', '=', base.core_base_id)
        .where((eb) =>
          eb.or([
            ...(ids.length ? [eb('core_meta_record_id', 'in', ids)] : []),
            eb.and([eb('side', '=', base.side), eb('remote_id', '=', remoteRecordId)]),
          ]),
        )
        .orderBy('created_at', 'desc')
        .limit(50)
        .execute();
      return {
        coreBaseId: base.core_base_id,
        side: base.side,
        items: rows.map(toCoreMetaRecord),
        issues: issues.map(toSyncError),
      };
    },
  );
}
