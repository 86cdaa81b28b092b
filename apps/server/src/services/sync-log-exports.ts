import type { SyncLogExportFilters } from '@lockstep/contract';
import type { z } from 'zod';
import type { Db } from '../db/database';

type Filters = z.infer<typeof SyncLogExportFilters>;

/** The operations an export covers: one sync's entries, narrowed by its saved filters. */
export function exportQuery(db: Db, coreBaseId: string, filters: Filters) {
  let q = db.selectFrom('sync_log_entry').where('core_base_id', '=', coreBaseId);
  if (filters.from) q = q.where('created_at', '>=', new Date(filters.from));
  if (filters.to) q = q.where('created_at', '<', new Date(filters.to));
  if (filters.operation) q = q.where('operation', '=', filters.operation);
  if (filters.side) q = q.where('side', '=', filters.side);
  return q;
}

export const EXPORT_COLUMNS = [
  'created_at',
  'sync_log_id',
  'core_meta_record_id',
  'side',
  'operation',
  'remote_id',
  'before',
  'after',
] as const;
