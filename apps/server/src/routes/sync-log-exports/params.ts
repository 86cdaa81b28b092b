import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database';
import type { SyncLogExportTable } from '../../db/schema';
import type { Principal } from '../../http/context';
import { notFound } from '../../http/http-error';
import { findCoreBase } from '../../services/core-bases';

export const Params = z.object({ id: z.string().uuid('must be a sync id (a UUID)') });
export const ExportParams = Params.extend({ exportId: z.string().uuid('must be an export id (a UUID)') });

export const toExport = (r: Selectable<SyncLogExportTable>) => ({
  id: r.id,
  coreBaseId: r.core_base_id,
  format: r.format,
  filters: r.filters,
  status: r.status,
  rowCount: r.row_count,
  createdAt: new Date(r.created_at).toISOString(),
  downloadPath: `/rest/core-bases/${r.core_base_id}/sync-log-exports/${r.id}/download`,
});

export async function findExport(db: Db, principal: Principal, params: z.infer<typeof ExportParams>) {
  const base = await findCoreBase(db, principal, params.id);
  const row = await db
    .selectFrom('sync_log_export')
    .selectAll()
    .where('id', '=', params.exportId)
    .where('core_base_id', '=', base.id)
    .executeTakeFirst();
  if (!row) throw notFound('Export');
  return row;
}
