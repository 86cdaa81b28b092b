import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { CoreMetaRecordTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { notFound } from '../http/http-error';
import { iso, toSyncLogEntry } from './sync-logs';

export function toCoreMetaRecord(r: Selectable<CoreMetaRecordTable>) {
  return {
    id: r.id,
    coreBaseId: r.core_base_id,
    tableMappingId: r.table_mapping_id,
    leftRemoteId: r.left_remote_id,
    rightRemoteId: r.right_remote_id,
    shadow: r.shadow,
    shadowVersion: r.shadow_version,
    syncDisabled: r.sync_disabled,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function findCoreMetaRecord(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('core_meta_record').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Record');
  return row;
}

/** Every change of one linked record, oldest first: its history across both sides and all runs. */
export async function recordHistory(db: Db, coreMetaRecordId: string, skip: number, take: number) {
  const q = db.selectFrom('sync_log_entry').where('core_meta_record_id', '=', coreMetaRecordId);
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('created_at').orderBy('id').offset(skip).limit(take).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    items: rows.map(toSyncLogEntry),
    total: Number(total.n),
    skip,
    take,
  };
}
