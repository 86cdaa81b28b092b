import { randomUUID } from 'node:crypto';
import { type RecordData, type Shadow, shadowAfterWrite, type WriteOp } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { shadowFromStore, toStoredShadow } from '../../db/stored-shadow';
import type { MappingPlan } from '../load-sync-plan';
import { type Counts, type RunContext, rowsDoc } from './run-context';

/** Trace events of a run (trace id = the sync log id), searchable on the trace-logs page. */
export async function trace(
  db: Db,
  ownerId: string,
  coreBaseId: string,
  traceId: string,
  event: string,
  data: Record<string, unknown>,
) {
  await db
    .insertInto('trace_log')
    .values({
      owner_id: ownerId,
      core_base_id: coreBaseId,
      trace_id: traceId,
      event,
      data: JSON.stringify(data),
    })
    .execute();
}

export async function addCounts(db: Db, syncLogId: string, counts: Counts) {
  if (Object.keys(counts).length === 0) return;
  // Added in the statement: one round trip, and two chunks adding at once both count.
  await sql`update sync_log set counts = counts || coalesce((
      select jsonb_object_agg(i.key, coalesce((counts->>i.key)::numeric, 0) + i.value::numeric)
      from jsonb_each_text(${JSON.stringify(counts)}::jsonb) as i), '{}'::jsonb)
    where id = ${syncLogId}::uuid`.execute(db);
}

/** Operations logged in one statement. */
export async function logOperations(
  db: Db,
  a: RunContext,
  entries: {
    l: string | null;
    s: 'left' | 'right';
    o: 'create' | 'update' | 'delete';
    r: string;
    b: unknown;
    a: unknown;
  }[],
) {
  if (entries.length === 0) return;
  await sql`insert into sync_log_entry (owner_id, sync_log_id, core_base_id, table_mapping_id, core_meta_record_id, side, operation, remote_id, before, after)
    select ${a.ownerId}, ${a.syncLogId}::uuid, ${a.coreBaseId}::uuid, ${a.m.tableMappingId}::uuid, u.l, u.s, u.o, u.r, u.b, u.a
      from json_to_recordset(${rowsDoc(entries)}::json) as u(l uuid, s text, o text, r text, b jsonb, a jsonb)`.execute(
    db,
  );
}

/** A record that syncs again resolves its open issues (one statement for a batch). */
export async function resolveIssues(db: Db, a: { coreBaseId: string }, remoteIds: string[]) {
  if (remoteIds.length === 0) return;
  await sql`update sync_error set status = 'resolved', updated_at = now()
     where core_base_id = ${a.coreBaseId}::uuid and status <> 'resolved' and remote_id = any(${remoteIds}::text[])`.execute(
    db,
  );
}

/**
 * Updated pairs resolve the open issues of both their records: an issue may name the record a value
 * was written from (a required value it lacked) as well as the one written to. A cause that still
 * stands is recorded again by the same run (recordOutcomes comes after the writes).
 */
export async function resolvePairIssues(db: Db, a: { coreBaseId: string }, linkIds: string[]) {
  if (linkIds.length === 0) return;
  await sql`update sync_error e set status = 'resolved', updated_at = now()
      from core_meta_record c
     where c.id = any(${linkIds}::uuid[]) and e.core_base_id = ${a.coreBaseId}::uuid and e.status <> 'resolved'
       and e.remote_id in (c.left_remote_id, c.right_remote_id)`.execute(db);
}

/**
 * A batch with at least this many creates on one side is logged as one operation that names its
 * records (a first sync's chunks, a bulk insert); fewer are logged one by one with their values.
 * The values of a batched create are its link's shadow until the record next changes, and that
 * change's operation keeps what it replaced.
 */
export const BATCHED_CREATES_MIN = 20;

/** Links the records a batch created, logs the operations and resolves their issues: a few statements per batch. */
export async function linkCreated(
  db: Db,
  a: RunContext & { openIssues: boolean },
  created: { op: Extract<WriteOp, { kind: 'create' }>; remoteId: string; postImage: RecordData | null }[],
) {
  for (const side of ['left', 'right'] as const) {
    const mine = created.filter((c) => c.op.side === side);
    if (mine.length >= BATCHED_CREATES_MIN) await linkBatch(db, a, side, mine);
    else if (mine.length > 0) await linkEach(db, a, mine);
  }
  if (a.openIssues)
    await resolveIssues(
      db,
      a,
      created.flatMap(({ op, remoteId }) => [remoteId, op.sourceId]),
    );
}

type Created = Parameters<typeof linkCreated>[2];

const linkRows = (a: RunContext, created: Created) =>
  created.map(({ op, remoteId, postImage }) => ({
    l: op.side === 'left' ? remoteId : op.sourceId,
    r: op.side === 'right' ? remoteId : op.sourceId,
    s: toStoredShadow(shadowAfterWrite(a.m.spec, op, postImage ?? { id: remoteId, fields: op.fields })),
  }));

/** One operation for the batch, naming its records; each link points at it. */
async function linkBatch(db: Db, a: RunContext, side: 'left' | 'right', created: Created) {
  const entryId = randomUUID();
  await sql`insert into core_meta_record (owner_id, core_base_id, table_mapping_id, left_remote_id, right_remote_id, shadow, shadow_version, created_entry_id)
      select ${a.ownerId}, ${a.coreBaseId}::uuid, ${a.m.tableMappingId}::uuid, u.l, u.r, u.s, 1, ${entryId}::uuid
        from json_to_recordset(${rowsDoc(linkRows(a, created))}::json) as u(l text, r text, s json)`.execute(
    db,
  );
  await db
    .insertInto('sync_log_entry')
    .values({
      id: entryId,
      owner_id: a.ownerId,
      sync_log_id: a.syncLogId,
      core_base_id: a.coreBaseId,
      table_mapping_id: a.m.tableMappingId,
      side,
      operation: 'create',
      record_count: created.length,
      records: JSON.stringify({
        remote: created.map((c) => c.remoteId),
        source: created.map((c) => c.op.sourceId),
      }),
    })
    .execute();
}

/** An operation per record, with the values written. */
async function linkEach(db: Db, a: RunContext, created: Created) {
  const links = linkRows(a, created);
  const lefts = links.map((l) => l.l);
  const rights = links.map((l) => l.r);
  // Each operation finds its link by the pair of ids.
  const rows = (
    await sql`insert into core_meta_record (owner_id, core_base_id, table_mapping_id, left_remote_id, right_remote_id, shadow, shadow_version)
      select ${a.ownerId}, ${a.coreBaseId}::uuid, ${a.m.tableMappingId}::uuid, u.l, u.r, u.s, 1
        from json_to_recordset(${rowsDoc(links)}::json) as u(l text, r text, s json)
      returning id, left_remote_id, right_remote_id`.execute(db)
  ).rows as { id: string; left_remote_id: string; right_remote_id: string }[];
  const linkOf = new Map(rows.map((r) => [`${r.left_remote_id}\u0000${r.right_remote_id}`, r.id]));
  await logOperations(
    db,
    a,
    created.map(({ op, remoteId, postImage }, i) => ({
      l: linkOf.get(`${lefts[i]}\u0000${rights[i]}`) ?? null,
      s: op.side,
      o: 'create' as const,
      r: remoteId,
      b: null,
      a: postImage?.fields ?? op.fields,
    })),
  );
}

/** Stores the shadows of a batch's updates, with the operations (before: the previous shadow's values). */
export async function storeUpdated(
  db: Db,
  a: RunContext & { openIssues: boolean },
  updated: {
    op: Extract<WriteOp, { kind: 'update' }>;
    remoteId: string;
    postImage: RecordData | null;
    before: Shadow | null;
  }[],
) {
  // Only the shadow entries that moved are sent and merged (`||`): an edit of one field of a wide
  // record moves one entry, and rewriting the whole shadow per record was most of a bulk update's cost.
  const doc = rowsDoc(
    updated.map(({ op, remoteId, postImage, before }) => ({
      id: op.linkId,
      s: toStoredShadow(
        movedEntries(
          before,
          shadowAfterWrite(a.m.spec, op, postImage ?? { id: remoteId, fields: op.fields }),
        ),
      ),
    })),
  );
  await sql`update core_meta_record as c set shadow = (c.shadow::jsonb || u.s)::json, shadow_version = c.shadow_version + 1, updated_at = now()
    from json_to_recordset(${doc}::json) as u(id uuid, s jsonb)
   where c.id = u.id`.execute(db);
  await moveLinksToAnsweredIds(
    db,
    a.m.tableMappingId,
    updated.map(({ op, remoteId }) => ({
      linkId: op.linkId,
      side: op.side,
      was: op.remoteId,
      now: remoteId,
    })),
  );
  // Before and after of the fields written (the whole post-image would repeat every unchanged column).
  await logOperations(
    db,
    a,
    updated.map(({ op, remoteId, postImage, before }) => ({
      l: op.linkId,
      s: op.side,
      o: 'update' as const,
      r: remoteId,
      // What the target held: the values the conditional write found there (what it overwrote),
      // else the shadow's.
      b: { ...beforeValues(a.m, op, before ?? {}), ...op.expected },
      a: postImage ? pick(postImage.fields, Object.keys(op.fields)) : op.fields,
    })),
  );
  if (a.openIssues)
    await resolvePairIssues(
      db,
      a,
      updated.map((u) => u.op.linkId),
    );
}

/**
 * An update the app answered with another id (Stripe replaces a price whose amount changed with a
 * new one and archives the old): the link follows the record to its new id. Left on the old id, the
 * next read would find the old record gone and the new one unknown, and delete and re-create the
 * partner on the other side (a new primary key, its history and relations lost). An id that another
 * link of the table pair already holds (the app merged two records into one) keeps the link where it
 * was: that is a merge, which the next read reports as a delete.
 */
export async function moveLinksToAnsweredIds(
  db: Db,
  tableMappingId: string,
  answers: { linkId: string; side: 'left' | 'right'; was: string; now: string }[],
) {
  const moved = answers.filter((x) => x.now !== x.was && x.now !== '');
  if (moved.length === 0) return;
  const doc = rowsDoc(moved.map((x) => ({ id: x.linkId, s: x.side, r: x.now })));
  await sql`update core_meta_record as c
       set left_remote_id = case when u.s = 'left' then u.r else c.left_remote_id end,
           right_remote_id = case when u.s = 'right' then u.r else c.right_remote_id end,
           updated_at = now()
      from json_to_recordset(${doc}::json) as u(id uuid, s text, r text)
     where c.id = u.id
       and not exists (
         select 1 from core_meta_record o
          where o.table_mapping_id = ${tableMappingId}::uuid and o.id <> c.id
            and case when u.s = 'left' then o.left_remote_id = u.r else o.right_remote_id = u.r end)`.execute(
    db,
  );
}

/** The entries of `next` that differ from `before` (all of them without a shadow before). */
export function movedEntries(before: Shadow | null, next: Shadow): Shadow {
  if (!before) return next;
  const moved: Shadow = {};
  for (const [k, v] of Object.entries(next)) {
    const was = before[k];
    if (!was || JSON.stringify(was) !== JSON.stringify(v)) moved[k] = v;
  }
  return moved;
}

export const pick = (fields: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => k in fields).map((k) => [k, fields[k]]));

/**
 * The shadow of a create replayed after a crash (its payload keeps no intended shadow): each written
 * field as the value on both sides. If the source held a value that converts differently, the next
 * read of it finds a change and sends it again, which is the right outcome for a record just made.
 */
export function recoveredShadow(m: MappingPlan, op: Extract<WriteOp, { kind: 'create' | 'update' }>): Shadow {
  const shadow: Shadow = {};
  for (const fm of m.spec.fields) {
    const target = op.side === 'left' ? fm.left : fm.right;
    if (!(target.id in op.fields)) continue;
    const v = op.fields[target.id] ?? null;
    shadow[fm.id] = { l: v, r: v };
  }
  return shadow;
}

/** Before: what the written side held, field by field, from the previous shadow. */
export function beforeValues(
  m: MappingPlan,
  op: Extract<WriteOp, { kind: 'create' | 'update' }>,
  prevShadow: Shadow,
) {
  const was: Record<string, unknown> = {};
  for (const fm of m.spec.fields) {
    const target = op.side === 'left' ? fm.left : fm.right;
    const sf = prevShadow[fm.id];
    if (sf && target.id in op.fields) was[target.id] = op.side === 'left' ? sf.l : sf.r;
  }
  return was;
}

/** A deleted record's before-image: each mapped field of the deleted side, as the shadow held it. */
export function deletedImage(m: MappingPlan, side: 'left' | 'right', shadow: Shadow) {
  const image: Record<string, unknown> = {};
  for (const fm of m.spec.fields) {
    const sf = shadow[fm.id];
    if (sf) image[(side === 'left' ? fm.left : fm.right).id] = side === 'left' ? sf.l : sf.r;
  }
  return image;
}

export async function applySuccess(
  db: Db,
  a: RunContext,
  op: WriteOp,
  remoteId: string,
  postImage: { id: string; fields: Record<string, unknown> } | null,
  recovering = false,
) {
  const now = new Date();
  let linkId: string | null = op.linkId;
  let before: unknown = null;
  if (op.kind === 'delete') {
    // The record's before-image (what the deleted side held when last in step, from the shadow):
    // what an undo of this run creates again.
    const gone = await db
      .deleteFrom('core_meta_record')
      .where('id', '=', op.linkId)
      .returning('shadow')
      .executeTakeFirst();
    before = deletedImage(a.m, op.side, shadowFromStore(gone?.shadow) ?? {});
    linkId = null;
  } else {
    // A replayed create returns the record as it is now (maybe edited since): the shadow then takes
    // what we wrote, so those later edits still count as changes.
    const shadow = recovering
      ? (op.intended ?? recoveredShadow(a.m, op))
      : shadowAfterWrite(a.m.spec, op, (postImage as never) ?? { id: remoteId, fields: op.fields });
    if (op.kind === 'create' && op.linkId === null) {
      const row = await db
        .insertInto('core_meta_record')
        .values({
          owner_id: a.ownerId,
          core_base_id: a.coreBaseId,
          table_mapping_id: a.m.tableMappingId,
          left_remote_id: op.side === 'left' ? remoteId : op.sourceId,
          right_remote_id: op.side === 'right' ? remoteId : op.sourceId,
          shadow: JSON.stringify(toStoredShadow(shadow)),
          shadow_version: 1,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      linkId = row.id;
    } else {
      const prev = await db
        .selectFrom('core_meta_record')
        .select('shadow')
        .where('id', '=', op.linkId as string)
        .executeTakeFirst();
      before = {
        ...beforeValues(a.m, op, shadowFromStore(prev?.shadow) ?? {}),
        // What the target held when it was written over (a conditional update checked it).
        ...(op.kind === 'update' ? op.expected : {}),
      };
      await db
        .updateTable('core_meta_record')
        .set((eb) => ({
          shadow: JSON.stringify(toStoredShadow(shadow)),
          shadow_version: eb('shadow_version', '+', 1),
          updated_at: now,
          ...(op.kind === 'create'
            ? { [op.side === 'left' ? 'left_remote_id' : 'right_remote_id']: remoteId }
            : {}),
        }))
        .where('id', '=', op.linkId as string)
        .execute();
      if (op.kind === 'update')
        await moveLinksToAnsweredIds(db, a.m.tableMappingId, [
          { linkId: op.linkId, side: op.side, was: op.remoteId, now: remoteId },
        ]);
    }
  }
  await db
    .insertInto('sync_log_entry')
    .values({
      owner_id: a.ownerId,
      sync_log_id: a.syncLogId,
      core_base_id: a.coreBaseId,
      table_mapping_id: a.m.tableMappingId,
      core_meta_record_id: linkId,
      side: op.side,
      operation: op.kind,
      remote_id: remoteId,
      before: before === null ? null : JSON.stringify(before),
      after:
        op.kind === 'delete' ? null : JSON.stringify(postImage?.fields ?? ('fields' in op ? op.fields : {})),
    })
    .execute();
  // A record that syncs again resolves its open issues.
  await db
    .updateTable('sync_error')
    .set({ status: 'resolved', updated_at: now })
    .where('core_base_id', '=', a.coreBaseId)
    .where('remote_id', 'in', [remoteId, ...(op.kind === 'create' ? [op.sourceId] : [])])
    .where('status', '!=', 'resolved')
    .execute();
}
