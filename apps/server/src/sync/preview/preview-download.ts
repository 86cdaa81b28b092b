import type { RecordData } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { updateProgress } from '../../services/progress';
import { stopwatch } from '../chunk-timings';
import { loadSyncPlan, type MappingPlan } from '../load-sync-plan';
import { keyFunction, matchFieldsOf } from '../match-key';
import { pageSizeOf } from '../page-size';
import { type SideConnectorDeps, sideConnector } from '../side-connector';

/** The table mappings a preview covers (those chosen, or all). */
export async function previewMappings(db: Db, preview: { core_base_id: string; core_table_ids: string[] }) {
  const plan = await loadSyncPlan(db, preview.core_base_id);
  const chosen = new Set(preview.core_table_ids);
  return {
    ownerId: plan?.ownerId ?? null,
    mappings: (plan?.mappings ?? []).filter((m) => chosen.size === 0 || chosen.has(m.tableMappingId)),
  };
}

/**
 * Stage 1 of a preview: download both sides of each table mapping into its staged records, page by
 * page (one statement per page; the heap holds one page), each with its match key, and keep where
 * each table's read ended: applying the preview starts the sync there instead of reading again.
 * `onlyTable`: download one external table again (the others keep what was downloaded).
 * Returns false when the preview was cancelled meanwhile.
 */
export async function downloadPreview(
  deps: SideConnectorDeps,
  preview: { id: string; core_base_id: string; core_table_ids: string[]; tracking_id: string | null },
  onlyTable?: string,
): Promise<boolean> {
  const { db } = deps;
  const { mappings } = await previewMappings(db, preview);
  let clear = db.deleteFrom('sync_preview_record').where('sync_preview_id', '=', preview.id);
  if (onlyTable) clear = clear.where('external_table_id', '=', onlyTable);
  await clear.execute();
  let done = 0;
  for (const m of mappings) {
    for (const side of ['left', 'right'] as const) {
      const table = m[side];
      if (onlyTable && table.tableId !== onlyTable) continue;
      const counted = await downloadTable(deps, preview, m, side, (n) => {
        done += n;
        return done;
      });
      if (!counted) return false;
    }
  }
  return true;
}

async function downloadTable(
  deps: SideConnectorDeps,
  preview: { id: string; tracking_id: string | null },
  m: MappingPlan,
  side: 'left' | 'right',
  add: (n: number) => number,
) {
  const { db } = deps;
  const table = m[side];
  const connector = await sideConnector(deps, table, side);
  const keyOf = keyFunction(m);
  let cursor: string | null = null;
  const lap = stopwatch();
  for (;;) {
    const page = await connector.read(table.tableRemoteId, cursor, { pageSize: pageSizeOf(connector) });
    lap('preview: read the app');
    if (page.records.length) {
      const doc = JSON.stringify(page.records.map((r) => ({ r: r.id, k: keyOf(side, r), f: r.fields })));
      await sql`insert into sync_preview_record (sync_preview_id, external_table_id, side, remote_id, match_key, fields)
        select ${preview.id}::uuid, ${table.tableId}::uuid, ${side}, u.r, u.k, u.f
          from json_to_recordset(${doc}::json) as u(r text, k text, f json)
        on conflict (sync_preview_id, external_table_id, remote_id) do nothing`.execute(db);
    }
    lap('preview: stage a page');
    const done = add(page.records.length);
    // A cancelled preview stops at its next page.
    if (
      preview.tracking_id &&
      !(await updateProgress(db, preview.tracking_id, {
        status: 'IN_PROGRESS',
        done,
        message: `Downloaded ${done} records`,
      }))
    )
      return false;
    if (!page.hasMore) {
      // The position after the whole read: changes made since it began come after it.
      await sql`update sync_preview set cursors = coalesce(cursors, '{}'::jsonb) || jsonb_build_object(${table.tableId}::text, ${page.nextCursor}::text),
          keyed_on = coalesce(keyed_on, '{}'::jsonb) || jsonb_build_object(${table.tableId}::text, ${matchFieldsOf(m)}::text)
        where id = ${preview.id}::uuid`.execute(db);
      return true;
    }
    cursor = page.nextCursor;
  }
}

/**
 * Makes the match keys of a preview's staged records again where the table pair's match fields
 * changed since they were downloaded (chunk by chunk, one statement per chunk).
 */
export async function rekeyStaged(db: Db, previewId: string, m: MappingPlan) {
  const row = await db
    .selectFrom('sync_preview')
    .select('keyed_on')
    .where('id', '=', previewId)
    .executeTakeFirst();
  const keyOf = keyFunction(m);
  for (const side of ['left', 'right'] as const) {
    const tableId = m[side].tableId;
    if (!row || row.keyed_on?.[tableId] === matchFieldsOf(m)) continue;
    let after = '0';
    for (;;) {
      const rows = (
        await sql<{
          id: string;
          remote_id: string;
          fields: Record<string, unknown>;
        }>`select id::text, remote_id, fields
          from sync_preview_record where sync_preview_id = ${previewId}::uuid and external_table_id = ${tableId}::uuid and side = ${side}
            and id > ${after}::bigint order by sync_preview_record.id limit 5000`.execute(db)
      ).rows;
      if (rows.length === 0) break;
      after = rows[rows.length - 1]?.id as string;
      const keys = rows.map((r) =>
        keyOf(side, { id: r.remote_id, fields: r.fields as RecordData['fields'] }),
      );
      await sql`update sync_preview_record p set match_key = u.k
        from unnest(${rows.map((r) => r.id)}::bigint[], ${keys}::text[]) as u(id, k) where p.id = u.id`.execute(
        db,
      );
    }
    await sql`update sync_preview set keyed_on = coalesce(keyed_on, '{}'::jsonb) || jsonb_build_object(${tableId}::text, ${matchFieldsOf(m)}::text)
      where id = ${previewId}::uuid`.execute(db);
  }
}
