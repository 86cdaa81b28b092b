import { type Link, matchRecords } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { shadowFromStore } from '../../db/stored-shadow';
import type { MappingPlan } from '../load-sync-plan';

export type LinkRow = {
  id: string;
  left_remote_id: string | null;
  right_remote_id: string | null;
  /** As stored (db/stored-shadow). */
  shadow: unknown;
  shadow_version: number;
};

export const toLink = (r: LinkRow): Link => ({
  id: r.id,
  leftId: r.left_remote_id,
  rightId: r.right_remote_id,
  shadow: shadowFromStore(r.shadow),
  version: r.shadow_version,
});

/**
 * The links of what a page read: one index lookup per side (an OR of both sides was planned as a
 * scan of the table pair's links, whose cost grew with the table), none for a side that read
 * nothing. A complete scan needs every link (absence is evidence).
 */
export async function loadLinks(
  db: Db,
  tableMappingId: string,
  ids: { left: string[]; right: string[] },
  everyLink: boolean,
): Promise<LinkRow[]> {
  const base = () =>
    db
      .selectFrom('core_meta_record')
      .select(['id', 'left_remote_id', 'right_remote_id', 'shadow', 'shadow_version'])
      .where('table_mapping_id', '=', tableMappingId);
  if (everyLink) return (await base().execute()) as LinkRow[];
  const byId = new Map<string, LinkRow>();
  for (const side of ['left', 'right'] as const) {
    if (ids[side].length === 0) continue;
    // One array parameter (not one bind parameter per id): pages are thousands of ids.
    const rows = await base()
      .where(sql<boolean>`${sql.ref(`${side}_remote_id`)} = any(${ids[side]}::text[])`)
      .execute();
    for (const r of rows) byId.set(r.id, r as LinkRow);
  }
  return [...byId.values()];
}

export async function hasLinks(db: Db, tableMappingId: string) {
  return (
    (await db
      .selectFrom('core_meta_record')
      .select('id')
      .where('table_mapping_id', '=', tableMappingId)
      .limit(1)
      .executeTakeFirst()) !== undefined
  );
}

/** First sync: pair records on the match field(s); a pair is linked with no shadow, so reconcile settles it (blanks filled, differences by the winner side). */
export async function linkMatches(
  db: Db,
  ownerId: string,
  coreBaseId: string,
  m: MappingPlan,
  left: MappingPlan['spec']['fields'] extends unknown ? Parameters<typeof matchRecords>[0]['left'] : never,
  right: Parameters<typeof matchRecords>[0]['right'],
) {
  const primary = m.spec.fields.find((f) => f.id === m.matchOn.primary);
  if (!primary) return;
  const secondary = m.spec.fields.find((f) => f.id === m.matchOn.secondary);
  const matched = matchRecords({
    left,
    right,
    key: { leftFieldId: primary.left.id, rightFieldId: primary.right.id, type: primary.left.type },
    ...(secondary
      ? {
          secondary: {
            leftFieldId: secondary.left.id,
            rightFieldId: secondary.right.id,
            type: secondary.left.type,
          },
        }
      : {}),
  });
  if (matched.pairs.length > 0) {
    await db
      .insertInto('core_meta_record')
      .values(
        matched.pairs.map((p) => ({
          owner_id: ownerId,
          core_base_id: coreBaseId,
          table_mapping_id: m.tableMappingId,
          left_remote_id: p.leftId,
          right_remote_id: p.rightId,
          shadow: '{}',
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}
