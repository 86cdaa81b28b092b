import { Side, SyncPreview, type SyncPreviewStatus } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findSyncPreview, toSyncPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

/** Statuses in which the table-pair settings can still change (before applying). */
const EDITABLE: SyncPreviewStatus[] = [
  'new',
  'download_finished',
  'planning_problem',
  'in_review',
  'download_failed',
];

export function patchTablePair(app: RestApp, ctx: AppContext) {
  app.patch(
    '/sync-preview/:id/table-pair/:tableMappingId',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          "Change a table pair's match fields or conflict winner before applying; plan again afterwards",
        params: PreviewParams.extend({ tableMappingId: z.string().uuid() }),
        body: z.strictObject({
          matchOnFieldId: z.string().uuid().nullable().optional(),
          matchOnSecondaryFieldId: z.string().uuid().nullable().optional(),
          conflictWinnerSide: Side.optional(),
        }),
        response: { 200: SyncPreview },
      },
    },
    async (request) => {
      const preview = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      if (!EDITABLE.includes(preview.status as SyncPreviewStatus)) {
        throw new HttpError(
          409,
          'Preview not editable',
          'The table pair can change only before applying.',
          'conflict',
        );
      }
      const mapping = await ctx.db
        .selectFrom('table_mapping')
        .select(['id', 'left_table_id'])
        .where('id', '=', request.params.tableMappingId)
        .where('core_base_id', '=', preview.core_base_id)
        .executeTakeFirst();
      if (!mapping)
        throw new HttpError(
          404,
          'Table mapping not found',
          'This table pair is not part of the sync.',
          'not_found',
        );
      const { matchOnFieldId, matchOnSecondaryFieldId, conflictWinnerSide } = request.body;
      for (const [key, id] of [
        ['matchOnFieldId', matchOnFieldId],
        ['matchOnSecondaryFieldId', matchOnSecondaryFieldId],
      ] as const) {
        if (!id) continue;
        const mapped = await ctx.db
          .selectFrom('column_mapping')
          .select('id')
          .where('table_mapping_id', '=', mapping.id)
          .where('left_column_id', '=', id)
          .executeTakeFirst();
        if (!mapped)
          throw new HttpError(
            400,
            `Invalid ${key}`,
            `${key} must be one of the mapped left fields.`,
            'validation',
          );
      }
      await ctx.db
        .updateTable('table_mapping')
        .set({
          ...(matchOnFieldId === undefined ? {} : { match_on_field_id: matchOnFieldId }),
          ...(matchOnSecondaryFieldId === undefined
            ? {}
            : { match_on_secondary_field_id: matchOnSecondaryFieldId }),
          ...(conflictWinnerSide ? { conflict_winner_side: conflictWinnerSide } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', mapping.id)
        .execute();
      return toSyncPreview(await findSyncPreview(ctx.db, principalOf(request), preview.id));
    },
  );
}
