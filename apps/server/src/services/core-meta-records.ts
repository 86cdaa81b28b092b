import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { CoreMetaRecordTable, SyncLogEntryTable } from '../db/schema';
import { shadowFromStore } from '../db/stored-shadow';
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
    shadow: shadowFromStore(r.shadow) ?? {},
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

type LinkIds = Pick<
  Selectable<CoreMetaRecordTable>,
  'id' | 'created_entry_id' | 'left_remote_id' | 'right_remote_id'
>;

/** The operations of one link: its own, and the batch of creates that made it (if it was batched). */
export function linkEntriesQuery(db: Db, link: LinkIds) {
  const q = db.selectFrom('sync_log_entry');
  return link.created_entry_id
    ? q.where((eb) =>
        eb.or([eb('core_meta_record_id', '=', link.id), eb('id', '=', link.created_entry_id as string)]),
      )
    : q.where('core_meta_record_id', '=', link.id);
}

/** A batch's operation as one record's: the id it created, and no list of the others. */
export function entryOfLink(e: Selectable<SyncLogEntryTable>, link: LinkIds): Selectable<SyncLogEntryTable> {
  if (!e.records) return e;
  const remote = e.side === 'left' ? link.left_remote_id : link.right_remote_id;
  return { ...e, core_meta_record_id: link.id, remote_id: remote, records: null };
}

/** Every change of one linked record, oldest first: its history across both sides and all runs. */
export async function recordHistory(db: Db, link: LinkIds, skip: number, take: number) {
  const q = linkEntriesQuery(db, link);
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('created_at').orderBy('id').offset(skip).limit(take).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    items: rows.map((e) => toSyncLogEntry(entryOfLink(e, link))),
    total: Number(total.n),
    skip,
    take,
  };
}
