import { type Link, matchKindOf, pluralOf, type RecordData, reconcile, tableNoun } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { stopwatch } from '../chunk-timings';
import type { MappingPlan } from '../load-sync-plan';
import { type RelationResolver, relationResolver } from '../relations';
import { loadLinks, toLink } from '../run/links';
import { rekeyStaged } from './preview-download';

export type PreviewSummary = {
  pairs: number;
  createLeft: number;
  createRight: number;
  updateLeft: number;
  updateRight: number;
  conflicts: number;
  unchanged: number;
  duplicates: number;
  missingKeys: number;
};

export const emptySummary = (): PreviewSummary => ({
  pairs: 0,
  createLeft: 0,
  createRight: 0,
  updateLeft: 0,
  updateRight: 0,
  conflicts: 0,
  unchanged: 0,
  duplicates: 0,
  missingKeys: 0,
});

/** Staged records planned per statement: the heap holds one chunk and its partners. */
const PLAN_CHUNK = 5000;
/** Problems of one value that the other app cannot take: shown in the preview before anything is written. */
const VALUE_PROBLEMS = new Set(['unmapped_option', 'type_mismatch', 'required_missing']);

type Staged = { id: string; remote_id: string; fields: Record<string, unknown> };

/**
 * Stage 2 of a preview, for one table mapping, without writing to the apps: matching and its
 * problems as set-based statements (the same grouping the first sync links by, so apply pairs what
 * the preview showed), then the engine plans the staged records a chunk at a time (left records
 * with their partners, then the right records nobody partnered), and each chunk's plans are stored
 * with one statement.
 */
export async function planMapping(
  db: Db,
  previewId: string,
  m: MappingPlan,
  summary: PreviewSummary,
  relationTargets: Map<string, string>,
) {
  const scope = sql`sync_preview_id = ${previewId}::uuid and
    ((external_table_id = ${m.left.tableId}::uuid and side = 'left') or (external_table_id = ${m.right.tableId}::uuid and side = 'right'))`;
  const lap = stopwatch();
  // Planned again (a table downloaded again): what an earlier plan decided is void.
  await sql`update sync_preview_record set plan = null, changes = null where ${scope} and plan is not null`.execute(
    db,
  );
  await sql`delete from sync_preview_pair where sync_preview_id = ${previewId}::uuid and table_mapping_id = ${m.tableMappingId}::uuid`.execute(
    db,
  );
  await rekeyStaged(db, previewId, m);
  if (m.matchOn.primary) await matchStaged(db, previewId, m, scope, summary);
  else await warnNoMatchField(db, previewId, m);
  lap('preview: key and match');

  const valueProblems: ValueProblems = new Map();
  const createsBefore = { left: summary.createLeft, right: summary.createRight };
  for (const side of ['left', 'right'] as const) {
    let after = '0';
    for (;;) {
      // Left records in order; then the right records no left record partnered (still unplanned).
      // Ordered by the column, not the text output named like it: that sorted the whole table.
      const rows = (
        await sql<Staged>`select id::text, remote_id, fields from sync_preview_record
          where sync_preview_id = ${previewId}::uuid and external_table_id = ${m[side].tableId}::uuid and side = ${side}
            and id > ${after}::bigint ${side === 'right' ? sql`and plan is null` : sql``}
          order by sync_preview_record.id limit ${PLAN_CHUNK}`.execute(db)
      ).rows;
      if (rows.length === 0) break;
      after = rows[rows.length - 1]?.id as string;
      lap('preview: read a chunk');
      await planChunk(db, previewId, m, side, rows, summary, valueProblems, relationTargets);
      lap('preview: plan a chunk');
    }
  }
  await storeValueProblems(db, previewId, m, valueProblems);
  await warnRequiredUnmapped(db, previewId, m, {
    left: summary.createLeft - createsBefore.left,
    right: summary.createRight - createsBefore.right,
  });
}

/**
 * A side that will get new records but has a required column (no empty value, no default) that no
 * field of the pair writes: every one of those creates would be refused by the app and become an
 * issue after apply. Said before apply instead, with the column and how many records it concerns.
 */
async function warnRequiredUnmapped(
  db: Db,
  previewId: string,
  m: MappingPlan,
  creates: { left: number; right: number },
) {
  for (const side of ['left', 'right'] as const) {
    if (creates[side] === 0) continue;
    // A field made of others (a Full name of first and last name) writes those.
    const written = m.spec.fields
      .filter((f) => !f[side].readOnly)
      .flatMap((f) => [f[side].id, ...(f[side].options?.madeOf ?? [])]);
    const missing = await db
      .selectFrom('external_column')
      .select(['remote_id', 'name'])
      .where('external_table_id', '=', m[side].tableId)
      .where('read_only', '=', false)
      .where(sql<boolean>`(options->>'required')::boolean is true`)
      .where('remote_id', 'not in', written.length > 0 ? written : [''])
      .orderBy('name')
      .execute();
    if (missing.length === 0) continue;
    const table = m[side].tableName;
    const names = missing.map((c) => c.name).join(', ');
    const n = creates[side];
    await sql`insert into sync_preview_problem (sync_preview_id, table_mapping_id, kind, message, details)
      values (${previewId}::uuid, ${m.tableMappingId}::uuid, 'required_unmapped',
        ${`${n} new ${n === 1 ? 'record' : 'records'} for ${table} would be refused: ${names} ${missing.length === 1 ? 'needs' : 'need'} a value and no field is mapped to ${missing.length === 1 ? 'it' : 'them'}. Map a field to ${missing.length === 1 ? 'it' : 'each'}, or give the column a default.`},
        ${JSON.stringify({ side, columns: missing.map((c) => c.remote_id), count: n })}::jsonb)`.execute(db);
  }
}

/** Values the other side cannot hold, by field and message, with how many records hold each. */
type ValueProblems = Map<
  string,
  { side: 'left' | 'right'; fieldId: string; message: string; records: string[] }
>;

/**
 * Values apply could not write (an option the other side lacks, a text that is no number): one
 * problem per field and value with its count, before apply, instead of an issue per record after.
 * A warning: apply writes the records without those values and opens issues for them.
 */
async function storeValueProblems(db: Db, previewId: string, m: MappingPlan, problems: ValueProblems) {
  const rows = [...problems.values()];
  if (rows.length === 0) return;
  const nameOf = (side: 'left' | 'right', fieldId: string) =>
    m.spec.fields.find((f) => f[side].id === fieldId)?.[side].name ?? fieldId;
  await sql`insert into sync_preview_problem (sync_preview_id, table_mapping_id, kind, message, details)
    select ${previewId}::uuid, ${m.tableMappingId}::uuid, 'value', u.message, u.details
      from json_to_recordset(${JSON.stringify(
        rows.map((p) => {
          const table = p.side === 'left' ? m.left.tableName : m.right.tableName;
          const n = p.records.length;
          return {
            message: `${n} ${n === 1 ? 'record' : 'records'} of ${table} (${nameOf(p.side, p.fieldId)}): ${p.message}`,
            details: {
              side: p.side,
              fieldId: p.fieldId,
              fieldName: nameOf(p.side, p.fieldId),
              count: n,
              recordIds: p.records.slice(0, 20),
            },
          };
        }),
      )}::json) as u(message text, details jsonb)`.execute(db);
}

/** Duplicate and missing keys become the preview's problems; keys unique on both sides pair. */
async function matchStaged(
  db: Db,
  previewId: string,
  m: MappingPlan,
  scope: ReturnType<typeof sql>,
  summary: PreviewSummary,
) {
  const duplicates =
    await sql`insert into sync_preview_problem (sync_preview_id, table_mapping_id, kind, message, details)
    select ${previewId}::uuid, ${m.tableMappingId}::uuid, 'duplicate',
      count(*) || ' ' || side || ' records share the key "' || replace(match_key, chr(31), ' + ') || '"; they are not matched.',
      jsonb_build_object('side', side, 'key', match_key, 'recordIds', jsonb_agg(remote_id order by id))
    from sync_preview_record where ${scope} and match_key is not null
    group by side, match_key having count(*) > 1`.execute(db);
  summary.duplicates += Number(duplicates.numAffectedRows ?? 0);
  const missing =
    await sql`insert into sync_preview_problem (sync_preview_id, table_mapping_id, kind, message, details)
    select ${previewId}::uuid, ${m.tableMappingId}::uuid, 'missing_key',
      'A ' || side || ' record has no value in the match field; it is created on the other side instead of matched.',
      jsonb_build_object('side', side, 'recordId', remote_id)
    from sync_preview_record where ${scope} and match_key is null`.execute(db);
  summary.missingKeys += Number(missing.numAffectedRows ?? 0);
  // As the first sync links (first-sync.ts): one grouped scan; records already linked stay out.
  const pairs =
    await sql`insert into sync_preview_pair (sync_preview_id, table_mapping_id, left_remote_id, right_remote_id)
    select ${previewId}::uuid, ${m.tableMappingId}::uuid, k.l, k.r from (
      select min(remote_id) filter (where side = 'left') as l, min(remote_id) filter (where side = 'right') as r,
        count(*) filter (where side = 'left') as nl, count(*) filter (where side = 'right') as nr
      from sync_preview_record where ${scope} and match_key is not null group by match_key) k
    where k.nl = 1 and k.nr = 1
      and not exists (select 1 from core_meta_record c where c.table_mapping_id = ${m.tableMappingId}::uuid and c.left_remote_id = k.l)
      and not exists (select 1 from core_meta_record c where c.table_mapping_id = ${m.tableMappingId}::uuid and c.right_remote_id = k.r)
    on conflict do nothing`.execute(db);
  summary.pairs += Number(pairs.numAffectedRows ?? 0);
}

/** A staged value as the first sync would match it (matchKeyOf): trimmed, spaces folded, lower case. */
const stagedKey = (fieldId: string) =>
  sql`nullif(lower(regexp_replace(btrim(fields->>${fieldId}), '[[:space:]]+', ' ', 'g')), '')`;

/**
 * A table pair without a match field creates every record on the other side. When the left
 * records' names or emails (a mapped field that looks like one) also occur on the right, that is
 * most likely the same things twice: a problem of kind no_match_field says so, with how many, for
 * the field that shares the most. Records already linked (a sync that ran, previewed again) are
 * left out: they are pairs, not duplicates to be. Set-based over the staged records; a warning only
 * (the status counts duplicates).
 */
async function warnNoMatchField(db: Db, previewId: string, m: MappingPlan) {
  const fields = m.spec.fields.filter((f) =>
    [matchKindOf(f.left), matchKindOf(f.right)].some((k) => k === 'email' || k === 'name'),
  );
  // A side with nothing staged shares nothing: a copy into an empty table skips the scans (0.5 s a
  // field per 100k records).
  const staged = (side: 'left' | 'right') =>
    sql<{ one: number }>`select 1 as one from sync_preview_record
      where sync_preview_id = ${previewId}::uuid and external_table_id = ${m[side].tableId}::uuid and side = ${side} limit 1`.execute(
      db,
    );
  if ((await staged('left')).rows.length === 0 || (await staged('right')).rows.length === 0) return;
  let worst: { field: (typeof fields)[number]; total: number; shared: number } | null = null;
  for (const field of fields) {
    const row = (
      await sql<{ total: string; shared: string }>`
      with l as (
        select ${stagedKey(field.left.id)} as k from sync_preview_record p
        where sync_preview_id = ${previewId}::uuid and external_table_id = ${m.left.tableId}::uuid and side = 'left'
          and not exists (select 1 from core_meta_record c
            where c.table_mapping_id = ${m.tableMappingId}::uuid and c.left_remote_id = p.remote_id)
      ), r as (
        select distinct ${stagedKey(field.right.id)} as k from sync_preview_record p
        where sync_preview_id = ${previewId}::uuid and external_table_id = ${m.right.tableId}::uuid and side = 'right'
          and not exists (select 1 from core_meta_record c
            where c.table_mapping_id = ${m.tableMappingId}::uuid and c.right_remote_id = p.remote_id)
      )
      select count(l.k) as total, count(r.k) as shared from l left join r on r.k = l.k`.execute(db)
    ).rows[0];
    const shared = Number(row?.shared ?? 0);
    if (shared > 0 && (!worst || shared > worst.shared))
      worst = { field, total: Number(row?.total ?? 0), shared };
  }
  if (!worst) return;
  const { field, total, shared } = worst;
  const message = `${shared} of ${total} ${tableNoun(m.left.tableName)} ${pluralOf(field.left.name)} also exist in ${m.right.tableName}: pick a match field or they will be duplicated.`;
  await sql`insert into sync_preview_problem (sync_preview_id, table_mapping_id, kind, message, details)
    values (${previewId}::uuid, ${m.tableMappingId}::uuid, 'no_match_field', ${message},
      ${JSON.stringify({ leftFieldId: field.left.id, rightFieldId: field.right.id, shared, total })}::jsonb)`.execute(
    db,
  );
}

async function planChunk(
  db: Db,
  previewId: string,
  m: MappingPlan,
  side: 'left' | 'right',
  rows: Staged[],
  summary: PreviewSummary,
  valueProblems: ValueProblems,
  relationTargets: Map<string, string>,
) {
  const ids = rows.map((r) => r.remote_id);
  // The links the sync already has for these records (a sync previewed again), by index.
  const links: Link[] = (
    await loadLinks(
      db,
      m.tableMappingId,
      { left: side === 'left' ? ids : [], right: side === 'right' ? ids : [] },
      false,
    )
  ).map(toLink);
  let partners: Staged[] = [];
  // Pairs the sync linked already (a sync previewed again) are matched pairs too.
  if (side === 'left') summary.pairs += links.filter((l) => l.leftId !== null && l.rightId !== null).length;
  if (side === 'left') {
    const pairs = (
      await sql<{
        l: string;
        r: string;
      }>`select left_remote_id as l, right_remote_id as r from sync_preview_pair
        where sync_preview_id = ${previewId}::uuid and table_mapping_id = ${m.tableMappingId}::uuid and left_remote_id = any(${ids}::text[])`.execute(
        db,
      )
    ).rows;
    for (const p of pairs)
      links.push({ id: `preview:${p.l}`, leftId: p.l, rightId: p.r, shadow: null, version: 0 });
    const partnerIds = links.map((l) => l.rightId).filter((id): id is string => id !== null);
    if (partnerIds.length > 0)
      partners = (
        await sql<Staged>`select id::text, remote_id, fields from sync_preview_record
          where sync_preview_id = ${previewId}::uuid and external_table_id = ${m.right.tableId}::uuid and side = 'right'
            and remote_id = any(${partnerIds}::text[])`.execute(db)
      ).rows;
  }
  const toRecord = (r: Staged): RecordData => ({ id: r.remote_id, fields: r.fields as RecordData['fields'] });
  const pages = {
    left: (side === 'left' ? rows : []).map(toRecord),
    right: (side === 'left' ? partners : rows).map(toRecord),
  };
  const resolveRelation = await previewRelationResolver(db, previewId, m, relationTargets, pages);
  const result = reconcile({
    mapping: m.spec,
    links,
    ...(resolveRelation ? { resolveRelation } : {}),
    left: { records: pages.left, deletedIds: [], scanComplete: false },
    right: { records: pages.right, deletedIds: [], scanComplete: false },
  });
  for (const p of result.problems) {
    if (!VALUE_PROBLEMS.has(p.code) || !p.side || !p.fieldId) continue;
    const key = `${p.side}\u0000${p.fieldId}\u0000${p.message}`;
    const entry = valueProblems.get(key) ?? {
      side: p.side,
      fieldId: p.fieldId,
      message: p.message,
      records: [],
    };
    if (p.recordId) entry.records.push(p.recordId);
    valueProblems.set(key, entry);
  }
  const planOf = new Map<string, string>();
  const keyOf = (s: string, id: string) => `${s}:${id}`;
  // What each update writes, before and after, on the record it updates.
  const changesOf = new Map<string, Record<string, [unknown, unknown]>>();
  for (const op of result.operations) {
    if (op.kind === 'create') {
      planOf.set(keyOf(op.side === 'left' ? 'right' : 'left', op.sourceId), `create_${op.side}`);
      if (op.side === 'left') summary.createLeft++;
      else summary.createRight++;
    } else if (op.kind === 'update') {
      planOf.set(keyOf(op.side, op.remoteId), `update_${op.side}`);
      changesOf.set(
        keyOf(op.side, op.remoteId),
        Object.fromEntries(
          Object.entries(op.fields).map(([field, after]) => [field, [op.expected[field] ?? null, after]]),
        ),
      );
      if (op.side === 'left') summary.updateLeft++;
      else summary.updateRight++;
    }
  }
  const linkById = new Map(links.map((l) => [l.id, l]));
  // The other record of an updated pair is not "already in step": it shows under the same plan
  // (the pair is one change), so the counts never show one pair as both updated and unchanged.
  for (const op of result.operations) {
    if (op.kind !== 'update') continue;
    const link = linkById.get(op.linkId);
    const partner = op.side === 'left' ? link?.rightId : link?.leftId;
    const key = partner ? keyOf(op.side === 'left' ? 'right' : 'left', partner) : null;
    if (key && !planOf.has(key)) planOf.set(key, `update_${op.side}`);
  }
  // A matched record whose link points at a record apply creates first: apply writes the relation
  // right after that create, a change of the partner the preview shows as such.
  const fieldsOf = new Map([
    ...rows.map((r) => [keyOf(side, r.remote_id), r.fields] as const),
    ...partners.map((r) => [keyOf('right', r.remote_id), r.fields] as const),
  ]);
  const linkOfRecord = new Map(
    links.flatMap((l) => [
      [keyOf('left', l.leftId ?? ''), l] as const,
      [keyOf('right', l.rightId ?? ''), l] as const,
    ]),
  );
  for (const pr of result.pendingRelations) {
    const to = pr.from === 'left' ? 'right' : 'left';
    const link = linkOfRecord.get(keyOf(pr.from, pr.sourceId));
    const partner = to === 'left' ? link?.leftId : link?.rightId;
    const fm = m.spec.fields.find((f) => f.id === pr.fieldMappingId);
    if (!partner || !fm) continue;
    const key = keyOf(to, partner);
    const after = pr.value.map((id) => resolveRelation?.(fm.id, pr.from, id) ?? `new record from ${id}`);
    changesOf.set(key, {
      ...changesOf.get(key),
      [fm[to].id]: [fieldsOf.get(key)?.[fm[to].id] ?? null, after],
    });
    if (planOf.get(key)?.startsWith('update_')) continue;
    planOf.set(key, `update_${to}`);
    planOf.set(keyOf(pr.from, pr.sourceId), `update_${to}`);
    if (to === 'left') summary.updateLeft++;
    else summary.updateRight++;
  }
  for (const c of result.heldConflicts) {
    const link = linkById.get(c.linkId);
    if (link?.leftId) planOf.set(keyOf('left', link.leftId), 'conflict');
    summary.conflicts++;
  }
  const planned = [
    ...rows.map((r) => ({ r, s: side })),
    ...partners.map((r) => ({ r, s: 'right' as const })),
  ];
  const plans = planned.map(({ r, s }) => planOf.get(keyOf(s, r.remote_id)) ?? 'unchanged');
  summary.unchanged += plans.filter((p) => p === 'unchanged').length;
  const changes = planned.map(({ r, s }) => {
    const c = changesOf.get(keyOf(s, r.remote_id));
    return c ? JSON.stringify(c) : null;
  });
  await sql`update sync_preview_record p set plan = u.plan, changes = u.changes::jsonb
    from unnest(${planned.map(({ r }) => r.id)}::bigint[], ${plans}::text[], ${changes}::text[]) as u(id, plan, changes)
    where p.id = u.id`.execute(db);
}

/**
 * Linked ids translated as apply will: through the sync's links, else through the pairs this
 * preview matched in the linked table (planned first: `orderByLinks`), so a relation apply writes on
 * a matched record shows as the change it is. Ids whose partner apply has yet to create stay pending.
 */
async function previewRelationResolver(
  db: Db,
  previewId: string,
  m: MappingPlan,
  targets: Map<string, string>,
  pages: { left: RecordData[]; right: RecordData[] },
): Promise<RelationResolver | undefined> {
  const linked = await relationResolver(db, m, targets, pages);
  if (!linked) return undefined;
  const paired = new Map<string, string>();
  for (const fm of m.spec.fields) {
    const target = targets.get(fm.id);
    if (fm.left.type !== 'relations' || !target) continue;
    for (const side of ['left', 'right'] as const) {
      const ids = new Set<string>();
      for (const r of pages[side]) {
        const v = r.fields[side === 'left' ? fm.left.id : fm.right.id];
        if (Array.isArray(v)) for (const id of v) ids.add(String(id));
      }
      if (ids.size === 0) continue;
      const [own, other] =
        side === 'left' ? ['left_remote_id', 'right_remote_id'] : ['right_remote_id', 'left_remote_id'];
      const rows = (
        await sql<{
          a: string;
          b: string;
        }>`select ${sql.ref(own)} as a, ${sql.ref(other)} as b from sync_preview_pair
          where sync_preview_id = ${previewId}::uuid and table_mapping_id = ${target}::uuid and ${sql.ref(own)} = any(${[...ids]}::text[])`.execute(
          db,
        )
      ).rows;
      for (const r of rows) paired.set(`${fm.id}:${side}:${r.a}`, r.b);
    }
  }
  return (fieldMappingId, from, remoteId) =>
    linked(fieldMappingId, from, remoteId) ?? paired.get(`${fieldMappingId}:${from}:${remoteId}`) ?? null;
}
