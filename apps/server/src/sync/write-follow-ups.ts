import type { TableConnector, WriteResult } from '@lockstep/connectors';
import {
  type Link,
  type ReconcileInput,
  type ReconcileResult,
  type RecordData,
  reconcile,
  type Shadow,
  type WriteOp,
} from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { MappingPlan } from './load-sync-plan';
import { type LinkRow, toLink } from './run/links';

/**
 * A write the app refused because the record is not what the plan assumed, with what it holds now:
 * - `stale`: a conditional update or delete found the target changed since it was read (or gone);
 * - `collided`: a create found a record already holding the same unique value (the same new key
 *   inserted on both sides, or a match value taken).
 * Neither is a failure of the record: the pair is reconciled again with the target as it is now.
 */
export type FollowUp =
  | { kind: 'stale'; op: Extract<WriteOp, { kind: 'update' | 'delete' }>; current: RecordData | null }
  | {
      kind: 'collided';
      op: Extract<WriteOp, { kind: 'create' }>;
      existingId: string;
      current: RecordData | null;
      error: Extract<WriteResult, { ok: false }>['error'];
    };

/** The follow-up a refused write asks for, if any (else it is an issue as usual). */
export function followUpOf(op: WriteOp, r: Extract<WriteResult, { ok: false }>): FollowUp | null {
  if (op.kind !== 'create' && r.error.code === 'version_conflict' && r.current !== undefined)
    return { kind: 'stale', op, current: r.current };
  if (op.kind === 'create' && r.existingId)
    return { kind: 'collided', op, existingId: r.existingId, current: r.current ?? null, error: r.error };
  return null;
}

/** Rounds of re-reconciling one run gives a record that keeps changing under its writes. */
export const FOLLOW_UP_ROUNDS = 3;

type Round = {
  db: Db;
  ownerId: string;
  coreBaseId: string;
  m: MappingPlan;
  /** The records this run read, by side and id: the source half of each pair where not read again. */
  read: { left: Map<string, RecordData>; right: Map<string, RecordData> };
  /** To read the source half again as it is now (connectors that read by id). */
  connectors?: { left: TableConnector; right: TableConnector };
  resolveRelation: ReconcileInput['resolveRelation'];
};

/**
 * One round: links the collided creates to the records they collided with (unless that record is
 * linked already: then it stays an issue, a real duplicate), then reconciles every pair again with
 * the source as read and the target as it is now, by the table pair's rule. Answers the plan to
 * apply, the shadows it started from, and the follow-ups it could not take (to report as issues).
 */
export async function reconcileFollowUps(
  r: Round,
  followUps: FollowUp[],
): Promise<{ result: ReconcileResult; shadows: Map<string, Shadow | null>; refused: FollowUp[] }> {
  const refused: FollowUp[] = [];
  const linkIds = new Set<string>();
  const records = { left: new Map<string, RecordData>(), right: new Map<string, RecordData>() };
  const deleted = { left: new Set<string>(), right: new Set<string>() };
  const source = (side: 'left' | 'right', id: string) => {
    const record = r.read[side].get(id);
    if (record) records[side].set(id, record);
  };
  for (const f of followUps) {
    const target = f.op.side;
    if (f.kind === 'stale') {
      linkIds.add(f.op.linkId);
      if (f.current) records[target].set(f.current.id, f.current);
      else deleted[target].add(f.op.remoteId);
      continue;
    }
    const column = target === 'left' ? 'left_remote_id' : 'right_remote_id';
    const taken = await r.db
      .selectFrom('core_meta_record')
      .select('id')
      .where('table_mapping_id', '=', r.m.tableMappingId)
      .where(column, '=', f.existingId)
      .executeTakeFirst();
    if (taken) {
      refused.push(f);
      continue;
    }
    // Linked with no shadow, as a first sync pairs matched records: reconcile fills blanks and
    // settles differences by the winner side.
    const pair =
      target === 'left'
        ? { left_remote_id: f.existingId, right_remote_id: f.op.sourceId }
        : { left_remote_id: f.op.sourceId, right_remote_id: f.existingId };
    const linkId =
      f.op.linkId ??
      (
        await r.db
          .insertInto('core_meta_record')
          .values({
            owner_id: r.ownerId,
            core_base_id: r.coreBaseId,
            table_mapping_id: r.m.tableMappingId,
            ...pair,
            shadow: '{}',
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    if (f.op.linkId)
      await r.db
        .updateTable('core_meta_record')
        .set({ [column]: f.existingId, updated_at: new Date() })
        .where('id', '=', f.op.linkId)
        .execute();
    linkIds.add(linkId);
    if (f.current) records[target].set(f.current.id, f.current);
  }
  const rows =
    linkIds.size === 0
      ? []
      : ((
          await sql<LinkRow>`select id, left_remote_id, right_remote_id, shadow, shadow_version from core_meta_record
              where id = any(${[...linkIds]}::uuid[])`.execute(r.db)
        ).rows ?? []);
  const links: Link[] = rows.map(toLink);
  // A refused delete: its source is still gone (that is why it was planned), the target edited since.
  for (const f of followUps) {
    if (f.kind !== 'stale' || f.op.kind !== 'delete') continue;
    const l = links.find((x) => x.id === f.op.linkId);
    const sourceId = f.op.side === 'left' ? l?.rightId : l?.leftId;
    if (sourceId) deleted[f.op.side === 'left' ? 'right' : 'left'].add(sourceId);
  }
  // The other half of each pair. Read again where the app reads by id: the run's page may be older
  // than the shadow, which this run's own writes to that side moved (a page's stale value then looked
  // like an edit and was written back over newer ones). Else the run's page.
  for (const side of ['left', 'right'] as const) {
    const ids = links.flatMap((l) => {
      const id = side === 'left' ? l.leftId : l.rightId;
      return id && !records[side].has(id) && !deleted[side].has(id) ? [id] : [];
    });
    const live = r.connectors?.[side].readRecords;
    if (live && ids.length > 0) {
      const table = side === 'left' ? r.m.left.tableRemoteId : r.m.right.tableRemoteId;
      const now = await live(table, ids);
      const found = new Set(now.map((x) => x.id));
      for (const x of now) records[side].set(x.id, x);
      for (const id of ids) if (!found.has(id)) deleted[side].add(id);
    } else for (const id of ids) source(side, id);
  }
  const result = reconcile({
    mapping: r.m.spec,
    links,
    left: { records: [...records.left.values()], deletedIds: [...deleted.left], scanComplete: false },
    right: { records: [...records.right.values()], deletedIds: [...deleted.right], scanComplete: false },
    // These pairs alone: deletes among them are evidence for one record each, never a mass delete.
    totalLinks: Number.MAX_SAFE_INTEGER,
    resolveRelation: r.resolveRelation,
  });
  // Records the round did not link create nothing: their creates were refused for a reason.
  result.operations = result.operations.filter((op) => op.kind !== 'create' || op.linkId !== null);
  return { result, shadows: new Map(links.map((l) => [l.id, l.shadow])), refused };
}
