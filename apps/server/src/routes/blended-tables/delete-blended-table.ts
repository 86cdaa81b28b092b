import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { syncsUsing } from '../../services/blended-tables/store';
import { BlendedTableParams } from './params';

/** Deletes a blended table (its sources' records stay); refused while a sync maps it. */
export function deleteBlendedTable(app: RestApp, ctx: AppContext) {
  app.delete(
    '/blended-tables/:id',
    {
      schema: {
        tags: ['blended-tables'],
        summary: "Delete a blended table (the sources' records stay); refused while a sync uses it",
        params: BlendedTableParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await ctx.db
        .selectFrom('blended_table')
        .select(['id', 'owner_id'])
        .where('id', '=', request.params.id)
        .where('owner_id', '=', principal.userId)
        .executeTakeFirst();
      if (!row) throw notFound('Blended table');
      const used = await syncsUsing(ctx.db, row.owner_id, row.id);
      if (used > 0)
        throw new HttpError(
          409,
          'Blended table in use',
          `This blended table is used by ${used === 1 ? 'a sync' : `${used} syncs`}. Remove its table mapping first, then delete it.`,
          'conflict',
        );
      await ctx.db.deleteFrom('blended_table').where('id', '=', row.id).execute();
      return { deleted: true as const };
    },
  );
}
