import type { ReadPage, TableConnector } from '@lockstep/connectors';
import type { RecordData } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { MappingPlan } from './load-sync-plan';
import { keyFunction } from './match-key';

/**
 * The first sync of a table pair with a match field, in three steps, each chunked:
 *  1. download: read both sides completely into first_sync_record (nothing is written to the apps);
 *  2. match: pair records whose normalised keys occur once on each side, as links without a shadow;
 *  3. reconcile: hand the staged records back to the runner a chunk at a time (each left record with
 *     its partner, then the right records without one), so the engine settles pairs (a value fills
 *     a blank; the winner side settles real differences) and creates the rest once.
 * Matching a page against a page would miss every partner that sits on another page and create it
 * twice. When the staged records are used up, the runner continues from the cursors the scans ended
 * on (the change capture since the scans began).
 */
export type FirstSyncStep =
  | { kind: 'downloading' }
  /**
   * A chunk to reconcile; `position` is stored (storeFirstSyncPosition) once its writes are applied.
   * `freshKeys`: none of its writes was sent before (it does not overlap the chunk whose writes were
   * sent last, see markFirstSyncSent), so the apps need not look its idempotency keys up.
   */
  | { kind: 'pages'; left: ReadPage; right: ReadPage; position: FirstSyncPosition; freshKeys: boolean }
  /** The staged records are used up and the cursors stored: the next chunk reads from them. */
  | { kind: 'finished' }
  | { kind: 'not_first_sync' };

const RECONCILE_CHUNK = 2000;

/** Staged records reconciled at once: bigger for a side that writes big jobs whole (bulkWriteSize). */
const reconcileChunkOf = (connectors: Sides) =>
  Math.max(
    RECONCILE_CHUNK,
    connectors.left.capabilities.bulkWriteSize ?? 0,
    connectors.right.capabilities.bulkWriteSize ?? 0,
  );

/** How far the reconcile step has got: staged records of `side` up to id `after` are applied. */
export type FirstSyncPosition = { tableMappingId: string; side: 'left' | 'right'; after: string };

/**
 * Moves the reconcile step past a chunk, after the chunk's writes and bookkeeping: a crash before
 * this reconciles the chunk again (its creates are recognised by their idempotency keys), never
 * skips it.
 */
export async function storeFirstSyncPosition(db: Db, p: FirstSyncPosition) {
  await db
    .updateTable('first_sync_state')
    .set({ reconcile_side: p.side, reconcile_after: p.after, updated_at: new Date() })
    .where('table_mapping_id', '=', p.tableMappingId)
    .execute();
}

/**
 * Said before a chunk's writes are sent: a crash before its position is stored reconciles it again,
 * and that chunk then overlaps this mark, so its writes go with every key looked up (some may have
 * landed). One statement per chunk.
 */
export async function markFirstSyncSent(db: Db, p: FirstSyncPosition) {
  await db
    .updateTable('first_sync_state')
    .set({ sent_side: p.side, sent_through: p.after })
    .where('table_mapping_id', '=', p.tableMappingId)
    .execute();
}

type Sides = { left: TableConnector; right: TableConnector };

type StagedRow = { id: string; remote_id: string; fields: Record<string, unknown> };

/**
 * The staged records of one side, as a subquery (id, remote_id, match_key, fields): the sync's own
 * download (first_sync_record), or the records of the preview it was applied from. Both hold a
 * record once (their unique keys).
 */
function stagedOf(m: MappingPlan, previewId: string | null, side: 'left' | 'right') {
  if (!previewId)
    return sql`(select id, remote_id, match_key, fields from first_sync_record
      where table_mapping_id = ${m.tableMappingId}::uuid and side = ${side})`;
  const tableId = side === 'left' ? m.left.tableId : m.right.tableId;
  return sql`(select p.id, p.remote_id, p.match_key, p.fields from sync_preview_record p
      where p.sync_preview_id = ${previewId}::uuid and p.external_table_id = ${tableId}::uuid and p.side = ${side})`;
}

const emptyPage = (cursor: string | null): ReadPage => ({
  records: [],
  deletedIds: [],
  nextCursor: cursor ?? '',
  hasMore: true,
  scanComplete: false,
});

export async function firstSyncStep(
  db: Db,
  ownerId: string,
  m: MappingPlan,
  connectors: Sides,
  options: { startsFirstSync: boolean; pageSize: (c: TableConnector) => number },
): Promise<FirstSyncStep> {
  let state = await db
    .selectFrom('first_sync_state')
    .selectAll()
    .where('table_mapping_id', '=', m.tableMappingId)
    .executeTakeFirst();
  if (!state) {
    // Staged only with a match field (or when an applied preview staged its download: then the
    // records are already here and are reconciled from here, with no match to make).
    if (!options.startsFirstSync || !m.matchOn.primary) return { kind: 'not_first_sync' };
    await db
      .insertInto('first_sync_state')
      .values({ table_mapping_id: m.tableMappingId, owner_id: ownerId })
      .onConflict((oc) => oc.doNothing())
      .execute();
    state = await db
      .selectFrom('first_sync_state')
      .selectAll()
      .where('table_mapping_id', '=', m.tableMappingId)
      .executeTakeFirstOrThrow();
  }

  // 1. Download a page of each side that is not read through yet.
  if (!state.left_done || !state.right_done) {
    const keyOf = keyFunction(m);
    for (const side of ['left', 'right'] as const) {
      if (side === 'left' ? state.left_done : state.right_done) continue;
      const connector = connectors[side];
      const table = side === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId;
      const page = await connector.read(table, side === 'left' ? state.left_cursor : state.right_cursor, {
        pageSize: options.pageSize(connector),
      });
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < page.records.length; i += 1000) {
          const rows = page.records.slice(i, i + 1000).map((r) => ({
            table_mapping_id: m.tableMappingId,
            side,
            remote_id: r.id,
            match_key: keyOf(side, r),
            fields: JSON.stringify(r.fields),
          }));
          // A page read again after a crash stages nothing twice.
          await trx
            .insertInto('first_sync_record')
            .values(rows)
            .onConflict((oc) =>
              oc.columns(['table_mapping_id', 'side', 'remote_id']).doUpdateSet((eb) => ({
                fields: eb.ref('excluded.fields'),
                match_key: eb.ref('excluded.match_key'),
              })),
            )
            .execute();
        }
        await trx
          .updateTable('first_sync_state')
          .set(
            side === 'left'
              ? { left_cursor: page.nextCursor, left_done: !page.hasMore, updated_at: new Date() }
              : { right_cursor: page.nextCursor, right_done: !page.hasMore, updated_at: new Date() },
          )
          .where('table_mapping_id', '=', m.tableMappingId)
          .execute();
      });
    }
    return { kind: 'downloading' };
  }

  // 2. Match: a key held by exactly one record on each side pairs them (duplicates pair nothing).
  // One grouped scan, no self-join: the staged rows are fresh, so the planner has no statistics for
  // them and a join was planned as nested loops (6,000 rows took 10 s, 20,000 took 100 s).
  const staged = (side: 'left' | 'right') => stagedOf(m, state.preview_id, side);
  if (!state.matched) {
    await sql`
      insert into core_meta_record (owner_id, core_base_id, table_mapping_id, left_remote_id, right_remote_id, shadow)
      select ${ownerId}, (select core_base_id from table_mapping where id = ${m.tableMappingId}), ${m.tableMappingId}, k.l, k.r, '{}'::json
      from (
        select min(remote_id) filter (where side = 'left') as l,
          min(remote_id) filter (where side = 'right') as r,
          count(*) filter (where side = 'left') as nl,
          count(*) filter (where side = 'right') as nr
        from (select 'left' as side, remote_id, match_key from ${staged('left')} l
              union all select 'right', remote_id, match_key from ${staged('right')} r) s
        where match_key is not null
        group by match_key
      ) k
      where k.nl = 1 and k.nr = 1
      on conflict do nothing`.execute(db);
    // The chunks below look staged rows up by key and side: give the planner their real numbers.
    await sql`analyze ${sql.table(state.preview_id ? 'sync_preview_record' : 'first_sync_record')}`.execute(
      db,
    );
    await db
      .updateTable('first_sync_state')
      .set({ matched: true, updated_at: new Date() })
      .where('table_mapping_id', '=', m.tableMappingId)
      .execute();
  }

  // 3. Reconcile a chunk: left records with their partners, then right records without one.
  const side = state.reconcile_side === 'right' ? 'right' : 'left';
  const after = state.reconcile_after;
  // A chunk starting before the end of the chunk sent last is that chunk again (after a crash).
  const sent = { side: state.sent_side, through: state.sent_through };
  const freshFrom = (s: 'left' | 'right', start: string) =>
    !(sent.side === s && sent.through !== null && BigInt(start) < BigInt(sent.through));
  const toRecord = (r: { remote_id: string; fields: Record<string, unknown> }): RecordData => ({
    id: r.remote_id,
    fields: r.fields as RecordData['fields'],
  });
  if (side === 'left') {
    const rows = (
      await sql<StagedRow>`select r.id::text as id, r.remote_id, r.fields from ${staged('left')} r
        where r.id > ${after}::bigint order by r.id limit ${reconcileChunkOf(connectors)}`.execute(db)
    ).rows;
    if (rows.length > 0) {
      const partners = (
        await sql<StagedRow>`select r.id::text as id, r.remote_id, r.fields from ${staged('right')} r
          join core_meta_record l on l.right_remote_id = r.remote_id and l.table_mapping_id = ${m.tableMappingId}::uuid
          where l.left_remote_id = any(${rows.map((r) => r.remote_id)}::text[])`.execute(db)
      ).rows;
      return {
        kind: 'pages',
        left: { ...emptyPage(null), records: rows.map(toRecord) },
        right: { ...emptyPage(null), records: partners.map(toRecord) },
        position: {
          tableMappingId: m.tableMappingId,
          side: 'left',
          after: String(rows[rows.length - 1]?.id),
        },
        freshKeys: freshFrom('left', after),
      };
    }
    await db
      .updateTable('first_sync_state')
      .set({ reconcile_side: 'right', reconcile_after: '0', updated_at: new Date() })
      .where('table_mapping_id', '=', m.tableMappingId)
      .execute();
  }
  const unpaired = (
    await sql<StagedRow>`select r.id::text as id, r.remote_id, r.fields from ${staged('right')} r
      where r.id > ${side === 'right' ? after : '0'}::bigint
        and not exists (select 1 from core_meta_record l
          where l.table_mapping_id = ${m.tableMappingId}::uuid and l.right_remote_id = r.remote_id)
      order by r.id limit ${reconcileChunkOf(connectors)}`.execute(db)
  ).rows;
  if (unpaired.length > 0) {
    return {
      kind: 'pages',
      left: emptyPage(null),
      right: { ...emptyPage(null), records: unpaired.map(toRecord) },
      position: {
        tableMappingId: m.tableMappingId,
        side: 'right',
        after: String(unpaired[unpaired.length - 1]?.id),
      },
      freshKeys: freshFrom('right', side === 'right' ? after : '0'),
    };
  }

  // Done: the runner goes on from where both scans ended (changes since they began).
  await db.transaction().execute(async (trx) => {
    for (const [tableId, cursor] of [
      [m.left.tableId, state.left_cursor],
      [m.right.tableId, state.right_cursor],
    ] as const) {
      await trx
        .insertInto('sync_cursor')
        .values({ external_table_id: tableId, owner_id: ownerId, cursor, full_scan_complete: true })
        .onConflict((oc) =>
          oc
            .column('external_table_id')
            .doUpdateSet({ cursor, full_scan_complete: true, updated_at: new Date() }),
        )
        .execute();
    }
    await trx.deleteFrom('first_sync_record').where('table_mapping_id', '=', m.tableMappingId).execute();
    await trx.deleteFrom('first_sync_state').where('table_mapping_id', '=', m.tableMappingId).execute();
  });
  return { kind: 'finished' };
}
