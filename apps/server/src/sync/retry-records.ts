import type { TableConnector } from '@lockstep/connectors';
import { differencesFromShadow, type Link, type RecordData } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { MappingPlan } from './load-sync-plan';
import { type LinkRow, toLink } from './run/links';

/** An issue the user retried, on one record of a table pair. */
export type RetriedIssue = {
  id: string;
  remoteId: string | null;
  side: 'left' | 'right' | null;
  linkId: string | null;
};

/** The retried issues of one table pair (a record's issue carries its table pair in details). */
export async function retriedIssues(
  db: Db,
  coreBaseId: string,
  tableMappingId: string,
): Promise<RetriedIssue[]> {
  const rows = await db
    .selectFrom('sync_error')
    .select(['id', 'remote_id', 'side', 'core_meta_record_id'])
    .where('core_base_id', '=', coreBaseId)
    .where('status', '=', 'retrying')
    .where((eb) => eb(eb.ref('details', '->>').key('tableMappingId'), '=', tableMappingId))
    .execute();
  return rows.map((r) => ({
    id: r.id,
    remoteId: r.remote_id,
    side: r.side === 'left' || r.side === 'right' ? r.side : null,
    linkId: r.core_meta_record_id,
  }));
}

/**
 * The records a retry reads again, on both sides: each issue's record and its partner. An issue's
 * id may belong to either side (a failed create names its source), so an unlinked id is looked for
 * on both.
 */
export async function retriedRecords(db: Db, m: MappingPlan, issues: RetriedIssue[]) {
  const ids = issues.flatMap((i) => (i.remoteId ? [i.remoteId] : []));
  const linkIds = issues.flatMap((i) => (i.linkId ? [i.linkId] : []));
  const rows = (
    await sql<LinkRow>`select id, left_remote_id, right_remote_id, shadow, shadow_version from core_meta_record
      where table_mapping_id = ${m.tableMappingId}::uuid
        and (id = any(${linkIds}::uuid[]) or left_remote_id = any(${ids}::text[]) or right_remote_id = any(${ids}::text[]))`.execute(
      db,
    )
  ).rows;
  const links: Link[] = rows.map(toLink);
  const left = new Set(links.flatMap((l) => (l.leftId ? [l.leftId] : [])));
  const right = new Set(links.flatMap((l) => (l.rightId ? [l.rightId] : [])));
  for (const id of ids)
    if (!left.has(id) && !right.has(id)) {
      left.add(id);
      right.add(id);
    }
  return { links, ids: { left: [...left], right: [...right] } };
}

/** Reads records by id on both sides; a linked id not found is a delete (read by its id, it is gone). */
export async function readBothSides(
  connectors: { left: TableConnector; right: TableConnector },
  m: MappingPlan,
  ids: { left: string[]; right: string[] },
  links: Link[],
) {
  const [left, right] = await Promise.all([
    connectors.left.readRecords?.(m.left.tableRemoteId, ids.left) ?? [],
    connectors.right.readRecords?.(m.right.tableRemoteId, ids.right) ?? [],
  ]);
  const found = { left: new Set(left.map((r) => r.id)), right: new Set(right.map((r) => r.id)) };
  const gone = (side: 'left' | 'right') =>
    links.flatMap((l) => {
      const id = side === 'left' ? l.leftId : l.rightId;
      return id && !found[side].has(id) ? [id] : [];
    });
  return {
    left: { records: left, deletedIds: gone('left'), scanComplete: false },
    right: { records: right, deletedIds: gone('right'), scanComplete: false },
  };
}

/**
 * After a retry's writes: each retried issue still `retrying` (a new failure would have reopened
 * it) is resolved only if its record is really in step now, live values on both sides against the
 * shadow; otherwise it goes back to open, with the fields that still differ. `live` holds the
 * records as read now; where `absenceIsEvidence`, a record it lacks is gone (read by id), else
 * unknown, and an issue whose record could not be seen stays open.
 */
export async function settleRetriedIssues(
  db: Db,
  m: MappingPlan,
  issues: RetriedIssue[],
  live: { left: RecordData[]; right: RecordData[]; absenceIsEvidence: boolean },
) {
  if (issues.length === 0) return;
  const { links } = await retriedRecords(db, m, issues);
  const byId = (records: RecordData[]) => new Map(records.map((r) => [r.id, r]));
  const records = { left: byId(live.left), right: byId(live.right) };
  for (const issue of issues) {
    const link = links.find(
      (l) =>
        l.id === issue.linkId ||
        (issue.remoteId !== null && (l.leftId === issue.remoteId || l.rightId === issue.remoteId)),
    );
    let differing: string[];
    if (link) {
      const L = link.leftId ? (records.left.get(link.leftId) ?? null) : null;
      const R = link.rightId ? (records.right.get(link.rightId) ?? null) : null;
      differing =
        !L && !R
          ? live.absenceIsEvidence
            ? []
            : ['not read again yet']
          : !live.absenceIsEvidence && (!L || !R)
            ? ['not read again yet']
            : differencesFromShadow(m.spec, link.shadow, L, R).map((d) => `${d.fieldMappingId} (${d.side})`);
    } else {
      // Never linked: in step only if the record is gone (a create that still cannot be made stays).
      const there =
        issue.remoteId !== null && (records.left.has(issue.remoteId) || records.right.has(issue.remoteId));
      differing = there
        ? ['the record exists on one side only']
        : live.absenceIsEvidence
          ? []
          : ['not read again yet'];
    }
    const row = await db
      .selectFrom('sync_error')
      .select('status')
      .where('id', '=', issue.id)
      .executeTakeFirst();
    if (row?.status !== 'retrying') continue;
    if (differing.length === 0)
      await db
        .updateTable('sync_error')
        .set({ status: 'resolved', updated_at: new Date() })
        .where('id', '=', issue.id)
        .execute();
    else
      await sql`update sync_error set status = 'open', attempts = attempts + 1, updated_at = now(),
          details = details || ${JSON.stringify({ stillDiffers: [...new Set(differing)] })}::jsonb
        where id = ${issue.id}::uuid`.execute(db);
  }
}
