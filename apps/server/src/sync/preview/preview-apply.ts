import { sql } from 'kysely';
import type { Db } from '../../db/database';
import type { MappingPlan } from '../load-sync-plan';

/**
 * Stage 3 of a preview, before the runner applies it: each table pair that has never synced starts
 * its first sync from what the preview downloaded (read where the preview keeps it: its records no
 * longer change once it is applying) and from where those reads ended, instead of reading both apps
 * again. Changes made in the apps since the download come after those positions, so the runner
 * applies them next.
 * A pair already syncing, already staged (apply resumed after a crash), or not downloaded whole is
 * left to the runner as it is.
 */
export async function stageFirstSyncsFromPreview(
  db: Db,
  preview: { id: string; cursors: Record<string, string> | null },
  ownerId: string,
  mappings: MappingPlan[],
) {
  const cursors = preview.cursors ?? {};
  for (const m of mappings) {
    const left = cursors[m.left.tableId];
    const right = cursors[m.right.tableId];
    if (left === undefined || right === undefined) continue;
    await sql`insert into first_sync_state (table_mapping_id, owner_id, left_cursor, right_cursor, left_done, right_done, preview_id)
        select ${m.tableMappingId}::uuid, ${ownerId}, ${left}, ${right}, true, true, ${preview.id}::uuid
        where not exists (select 1 from core_meta_record where table_mapping_id = ${m.tableMappingId}::uuid)
          and not exists (select 1 from sync_cursor where external_table_id in (${m.left.tableId}::uuid, ${m.right.tableId}::uuid) and cursor is not null)
        on conflict (table_mapping_id) do nothing`.execute(db);
  }
}
