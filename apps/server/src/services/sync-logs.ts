import type { SyncLog } from '@lockstep/contract';
import type { Selectable } from 'kysely';
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
  };
}

/** One operation: what a run changed on one side, with before and after values. */
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
    createdAt: iso(e.created_at),
  };
}
