import { Uuid } from '@lockstep/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

const TableProgress = z.object({
  tableMappingId: Uuid,
  /** Records in step on both sides so far (matched pairs, then each record created). */
  done: z.number().int(),
  /** Records the applied preview puts in step: every left record, and the right ones it creates on the left. */
  total: z.number().int(),
});

/**
 * How far applying a preview has come, per table pair: the links written so far against the
 * records the preview planned. Cheap to poll (two grouped counts), so the page shows a bar, not a spinner.
 */
export function getApplyProgress(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id/apply-progress',
    {
      schema: {
        tags: ['sync-preview'],
        summary: 'Progress of applying a preview: records in step so far and in all, per table pair',
        params: PreviewParams,
        response: {
          200: z.object({ done: z.number().int(), total: z.number().int(), tables: z.array(TableProgress) }),
        },
      },
    },
    async (request) => {
      const preview = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      const rows = (
        await sql<{ id: string; done: string; total: string }>`
        select m.id,
          (select count(*) from core_meta_record c
            where c.table_mapping_id = m.id and c.left_remote_id is not null and c.right_remote_id is not null) as done,
          (select count(*) from sync_preview_record r
            where r.sync_preview_id = ${preview.id}::uuid
              and ((r.side = 'left' and r.external_table_id = m.left_table_id)
                or (r.side = 'right' and r.external_table_id = m.right_table_id and r.plan = 'create_left'))) as total
        from table_mapping m where m.core_base_id = ${preview.core_base_id}::uuid
        order by m.created_at, m.id`.execute(ctx.db)
      ).rows;
      const tables = rows.map((r) => {
        const total = Number(r.total);
        return { tableMappingId: r.id, done: Math.min(Number(r.done), total), total };
      });
      return {
        done: tables.reduce((n, t) => n + t.done, 0),
        total: tables.reduce((n, t) => n + t.total, 0),
        tables,
      };
    },
  );
}
