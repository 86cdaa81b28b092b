import type { SyncLog } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { SyncLogEntryTable, SyncLogTable } from '../db/schema';

export const iso = (d: Date | string) => new Date(d).toISOString();

export function toSyncLog(row: Selectable<SyncLogTable>): SyncLog {
  return {
    id: row.id,
    coreBaseId: row.core_base_id,
    trigger: row.trigger,
    status: row.status,
    counts: row.counts,
    error: row.error,
    startedAt: iso(row.started_at),
    finishedAt: row.finished_at ? iso(row.finished_at) : null,
    undoOf: row.undo_of ?? null,
    progress: row.progress ?? null,
    undoResults: row.undo_results ?? null,
  };
}

/**
 * One operation: what a run changed on one side, with before and after values; or a batch of
 * creates logged as one (`records` names them).
 */
export function toSyncLogEntry(e: Selectable<SyncLogEntryTable>) {
  return {
    id: e.id,
    syncLogId: e.sync_log_id,
    coreMetaRecordId: e.core_meta_record_id,
    side: e.side,
    operation: e.operation,
    remoteId: e.remote_id,
    before: e.before ?? null,
    after: e.after ?? null,
    recordCount: e.record_count,
    records: e.records ?? null,
    createdAt: iso(e.created_at),
  };
}

export type SyncLogFilter = {
  /** One sync's runs (its owner checked by the caller), or else all runs of `ownerId`. */
  coreBaseId?: string | undefined;
  ownerId: string;
  status?: Selectable<SyncLogTable>['status'] | undefined;
  from?: string | undefined;
  to?: string | undefined;
};

/**
 * The runs GET /rest/sync-logs lists, before paging. Sorted newest first then by id, it reads
 * sync_log_owner_idx or sync_log_base_recent_idx in their own order (migration 0009).
 */
export function syncLogsQuery(db: Db, f: SyncLogFilter) {
  let q = db.selectFrom('sync_log');
  q = f.coreBaseId ? q.where('core_base_id', '=', f.coreBaseId) : q.where('owner_id', '=', f.ownerId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.from) q = q.where('started_at', '>=', new Date(f.from));
  if (f.to) q = q.where('started_at', '<', new Date(f.to));
  return q;
}

/** A page of syncLogsQuery in the list's order. */
export function syncLogsPage(db: Db, f: SyncLogFilter, skip: number, take: number) {
  return syncLogsQuery(db, f)
    .selectAll()
    .orderBy('started_at', 'desc')
    .orderBy('id')
    .offset(skip)
    .limit(take);
}
