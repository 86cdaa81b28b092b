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

/**
 * The rows of an export from one operation: a batch of creates logged as one (`records`) becomes a
 * row per record, as if each had been logged alone.
 */
export function* exportRows<T extends { remote_id: string | null; records?: { remote: string[] } | null }>(
  row: T,
): Generator<Omit<T, 'records'>> {
  const { records, ...rest } = row;
  if (!records) {
    yield rest;
    return;
  }
  for (const remote of records.remote) yield { ...rest, remote_id: remote };
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
