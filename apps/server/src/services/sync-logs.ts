import type { SyncLog } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { SyncLogTable } from '../db/schema';

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
