import type { TableConnector, WriteRequest } from '@lockstep/connectors';
import {
  type PendingRelation,
  type RecordData,
  refersTo,
  type Shadow,
  type Side,
  valuesEqual,
} from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import { shadowFromStore, storedShadowEntry } from '../db/stored-shadow';
import type { MappingPlan } from './load-sync-plan';

/**
 * Linked-record fields. A relation field of one table mapping holds record ids of another table;
 * its values cross over through the links of the table mapping whose two tables are the ones the
 * two fields link to (the "target" mapping). An id whose record has no partner yet is never
 * written dangling: the value waits in `pending_relation` and is written once the partner exists.
 */

const referencesOf = (options: unknown) => (options as { references?: unknown } | undefined)?.references;

/** For each relation field mapping (by id), the table mapping its ids translate through. */
export function relationTargets(mappings: MappingPlan[]): Map<string, string> {
  const targets = new Map<string, string>();
  for (const m of mappings) {
    for (const fm of m.spec.fields) {
      if (fm.left.type !== 'relations' || fm.right.type !== 'relations') continue;
      const target = mappings.find(
        (t) =>
          refersTo(referencesOf(fm.left.options), t.left.tableRemoteId) &&
          refersTo(referencesOf(fm.right.options), t.right.tableRemoteId),
      );
      if (target) targets.set(fm.id, target.tableMappingId);
    }
  }
  return targets;
}

/**
 * Mappings in an order where a table's linked tables sync before it (contacts after companies), so
 * most relations find their partner in the same run; cycles keep their original order.
 */
export function orderByLinks(mappings: MappingPlan[]): MappingPlan[] {
  const targets = relationTargets(mappings);
  const needs = new Map(
    mappings.map((m) => [
      m.tableMappingId,
      new Set(
        m.spec.fields
          .map((fm) => targets.get(fm.id))
          .filter((t): t is string => t !== undefined && t !== m.tableMappingId),
      ),
    ]),
  );
  const done = new Set<string>();
  const out: MappingPlan[] = [];
  const visiting = new Set<string>();
  const visit = (m: MappingPlan) => {
    if (done.has(m.tableMappingId) || visiting.has(m.tableMappingId)) return;
    visiting.add(m.tableMappingId);
    for (const t of needs.get(m.tableMappingId) ?? []) {
      const dep = mappings.find((x) => x.tableMappingId === t);
      if (dep) visit(dep);
    }
    visiting.delete(m.tableMappingId);
    done.add(m.tableMappingId);
    out.push(m);
  };
  for (const m of mappings) visit(m);
  return out;
}

/** The ids of the other side for `ids` of `from`, through one mapping's links. */
async function partnersOf(db: Db, tableMappingId: string, from: Side, ids: string[]) {
  if (ids.length === 0) return new Map<string, string>();
  const [own, other] =
    from === 'left' ? ['left_remote_id', 'right_remote_id'] : ['right_remote_id', 'left_remote_id'];
  const rows = (
    await sql<{
      a: string;
      b: string;
    }>`select ${sql.ref(own)} as a, ${sql.ref(other)} as b from core_meta_record
      where table_mapping_id = ${tableMappingId}::uuid and ${sql.ref(own)} = any(${ids}::text[]) and ${sql.ref(other)} is not null`.execute(
      db,
    )
  ).rows;
  return new Map(rows.map((r) => [r.a, r.b]));
}

export type RelationResolver = (fieldMappingId: string, from: Side, remoteId: string) => string | null;

/**
 * A resolver for the engine over the records one page read: the partners of every linked id they
 * hold, looked up in one query per relation field and side.
 */
export async function relationResolver(
  db: Db,
  m: MappingPlan,
  targets: Map<string, string>,
  pages: { left: RecordData[]; right: RecordData[] },
): Promise<RelationResolver | undefined> {
  const fields = m.spec.fields.filter((fm) => fm.left.type === 'relations');
  if (fields.length === 0) return undefined;
  const known = new Map<string, Map<string, string>>();
  for (const fm of fields) {
    const target = targets.get(fm.id);
    for (const side of ['left', 'right'] as const) {
      const fieldId = side === 'left' ? fm.left.id : fm.right.id;
      const ids = new Set<string>();
      for (const r of pages[side]) {
        const v = r.fields[fieldId];
        if (Array.isArray(v)) for (const id of v) ids.add(String(id));
      }
      known.set(
        `${fm.id}:${side}`,
        target ? await partnersOf(db, target, side, [...ids]) : new Map<string, string>(),
      );
    }
  }
  return (fieldMappingId, from, remoteId) => known.get(`${fieldMappingId}:${from}`)?.get(remoteId) ?? null;
}

/** Stores relations that wait (the latest value of a record's field replaces an older one). */
export async function storePendingRelations(
  db: Db,
  a: { ownerId: string; coreBaseId: string; m: MappingPlan },
  pending: PendingRelation[],
) {
  if (pending.length === 0) return;
  const doc = JSON.stringify(
    pending.map((p) => ({ c: p.fieldMappingId, f: p.from, s: p.sourceId, v: p.value })),
  );
  await sql`insert into pending_relation (owner_id, core_base_id, table_mapping_id, column_mapping_id, from_side, source_id, value)
    select ${a.ownerId}, ${a.coreBaseId}::uuid, ${a.m.tableMappingId}::uuid, u.c, u.f, u.s, u.v
      from json_to_recordset(${doc}::json) as u(c uuid, f text, s text, v jsonb)
    on conflict (column_mapping_id, from_side, source_id)
      do update set value = excluded.value, attempts = 0, created_at = now()`.execute(db);
}

/** After this many passes without every linked record synced, the record gets an issue (once). */
const ATTEMPTS_BEFORE_ISSUE = 3;
/** Pending relations handled per mapping and run chunk. */
const PASS_LIMIT = 5000;

type PendingRow = {
  id: string;
  column_mapping_id: string;
  from_side: Side;
  source_id: string;
  value: string[];
  attempts: number;
};

export type PendingRelationsDeps = {
  db: Db;
  ownerId: string;
  coreBaseId: string;
  syncLogId: string;
  m: MappingPlan;
  targets: Map<string, string>;
  connectors: { left: TableConnector; right: TableConnector };
  /** Logs the operations of the writes (the run's Operations log). */
  logUpdates: (
    entries: { linkId: string; side: Side; remoteId: string; before: unknown; after: unknown }[],
  ) => Promise<void>;
  /** A record whose relation cannot be written (or keeps waiting) becomes an issue. */
  recordIssue: (
    side: Side,
    remoteId: string,
    error: { code: string; message: string; userFacingMessage: string },
    linkId: string | null,
  ) => Promise<void>;
};

/**
 * Writes the relations that waited, now that the records they link to have partners: one update
 * per record (batched per side), the shadow of the field moved to what was written. A value the
 * source has changed since (the shadow no longer holds it) is dropped: the newer one is pending or
 * written already.
 */
export async function writePendingRelations(d: PendingRelationsDeps): Promise<{ written: number }> {
  const { db, m } = d;
  const rows = (await db
    .selectFrom('pending_relation')
    .select(['id', 'column_mapping_id', 'from_side', 'source_id', 'value', 'attempts'])
    .where('table_mapping_id', '=', m.tableMappingId)
    .orderBy('id')
    .limit(PASS_LIMIT)
    .execute()) as PendingRow[];
  if (rows.length === 0) return { written: 0 };

  // Links of the source records, and the partners of every id they wait for.
  const links = new Map<string, { id: string; left: string | null; right: string | null; shadow: Shadow }>();
  for (const side of ['left', 'right'] as const) {
    const ids = rows.filter((r) => r.from_side === side).map((r) => r.source_id);
    if (ids.length === 0) continue;
    const col = side === 'left' ? 'left_remote_id' : 'right_remote_id';
    const found = (
      await sql<{
        id: string;
        left_remote_id: string | null;
        right_remote_id: string | null;
        shadow: unknown;
      }>`select id, left_remote_id, right_remote_id, shadow from core_meta_record
          where table_mapping_id = ${m.tableMappingId}::uuid and ${sql.ref(col)} = any(${ids}::text[])`.execute(
        db,
      )
    ).rows;
    for (const l of found)
      links.set(`${side}:${side === 'left' ? l.left_remote_id : l.right_remote_id}`, {
        id: l.id,
        left: l.left_remote_id,
        right: l.right_remote_id,
        shadow: shadowFromStore(l.shadow) ?? {},
      });
  }
  const partners = new Map<string, Map<string, string>>();
  for (const fm of m.spec.fields) {
    const target = d.targets.get(fm.id);
    for (const side of ['left', 'right'] as const) {
      const ids = [
        ...new Set(
          rows.filter((r) => r.column_mapping_id === fm.id && r.from_side === side).flatMap((r) => r.value),
        ),
      ];
      partners.set(`${fm.id}:${side}`, target ? await partnersOf(db, target, side, ids) : new Map());
    }
  }

  const stale: string[] = [];
  const waiting: PendingRow[] = [];
  const ready: Record<Side, { row: PendingRow; linkId: string; remoteId: string; value: string[] | null }[]> =
    {
      left: [],
      right: [],
    };
  for (const row of rows) {
    const fm = m.spec.fields.find((f) => f.id === row.column_mapping_id);
    const link = links.get(`${row.from_side}:${row.source_id}`);
    const held = link?.shadow[row.column_mapping_id];
    const heldValue = held ? (row.from_side === 'left' ? held.l : held.r) : undefined;
    // The record was unlinked, or its value changed since: this row has nothing left to write.
    if (!fm || (link && held && !valuesEqual(heldValue ?? null, row.value))) {
      stale.push(row.id);
      continue;
    }
    const to: Side = row.from_side === 'left' ? 'right' : 'left';
    const targetId = link ? (to === 'left' ? link.left : link.right) : null;
    const map = partners.get(`${fm.id}:${row.from_side}`);
    const mapped = row.value.map((id) => map?.get(id) ?? null);
    if (!link || !targetId || mapped.some((x) => x === null)) {
      waiting.push(row);
      continue;
    }
    const value = [...new Set(mapped as string[])].sort();
    ready[to].push({ row, linkId: link.id, remoteId: targetId, value: value.length ? value : null });
  }

  if (stale.length) await db.deleteFrom('pending_relation').where('id', 'in', stale).execute();
  if (waiting.length) {
    await db
      .updateTable('pending_relation')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where(
        'id',
        'in',
        waiting.map((w) => w.id),
      )
      .execute();
    for (const w of waiting.filter((x) => x.attempts + 1 === ATTEMPTS_BEFORE_ISSUE)) {
      const app = w.from_side === 'left' ? m.right.type : m.left.type;
      await d.recordIssue(
        w.from_side,
        w.source_id,
        {
          code: 'relation_pending',
          message: `Linked records ${w.value.join(', ')} have no partner in the other app yet`,
          userFacingMessage: `This record links to records that have not synced to ${app} yet (${w.value.join(', ')}), so its link is not written there. It is written as soon as they sync; check their own issues.`,
        },
        links.get(`${w.from_side}:${w.source_id}`)?.id ?? null,
      );
    }
  }

  let written = 0;
  for (const to of ['left', 'right'] as const) {
    const items = ready[to];
    const table = to === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId;
    const size = Math.max(1, d.connectors[to].capabilities.batchSize);
    for (let i = 0; i < items.length; i += size) {
      const batch = items.slice(i, i + size);
      const fieldsOf = (b: (typeof batch)[number]) => {
        const fm = m.spec.fields.find((f) => f.id === b.row.column_mapping_id);
        return { [(to === 'left' ? fm?.left.id : fm?.right.id) as string]: b.value };
      };
      const requests: WriteRequest[] = batch.map((b) => ({
        kind: 'update',
        remoteId: b.remoteId,
        fields: fieldsOf(b),
        idempotencyKey: `relation:${b.row.id}`,
      }));
      const results = await d.connectors[to].write(table, requests);
      const ok: typeof batch = [];
      for (const [j, b] of batch.entries()) {
        const r = results[j];
        if (r?.ok) ok.push(b);
        else
          await d.recordIssue(
            to,
            b.remoteId,
            r && !r.ok
              ? r.error
              : { code: 'transient', message: 'no result', userFacingMessage: 'The app did not answer.' },
            b.linkId,
          );
      }
      if (ok.length === 0) continue;
      const doc = JSON.stringify(
        ok.map((b) => ({
          id: b.linkId,
          f: b.row.column_mapping_id,
          s: storedShadowEntry(
            to === 'left' ? { l: b.value, r: b.row.value } : { l: b.row.value, r: b.value },
          ),
        })),
      );
      await db.transaction().execute(async (trx) => {
        await sql`update core_meta_record as c set shadow = jsonb_set(c.shadow::jsonb, array[u.f], u.s)::json, shadow_version = c.shadow_version + 1, updated_at = now()
          from json_to_recordset(${doc}::json) as u(id uuid, f text, s jsonb) where c.id = u.id`.execute(trx);
        await trx
          .deleteFrom('pending_relation')
          .where(
            'id',
            'in',
            ok.map((b) => b.row.id),
          )
          .execute();
        await sql`update sync_error set status = 'resolved', updated_at = now()
          where core_base_id = ${d.coreBaseId}::uuid and status <> 'resolved' and code = 'relation_pending'
            and remote_id = any(${ok.map((b) => b.row.source_id)}::text[])`.execute(trx);
      });
      await d.logUpdates(
        ok.map((b) => ({
          linkId: b.linkId,
          side: to,
          remoteId: b.remoteId,
          before: null,
          after: fieldsOf(b),
        })),
      );
      written += ok.length;
    }
  }
  return { written };
}
