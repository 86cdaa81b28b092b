import { BlendedTable } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toBlendedTable } from '../../services/blended-tables/store';

export function listBlendedTables(app: RestApp, ctx: AppContext) {
  app.get(
    '/blended-tables',
    {
      schema: {
        tags: ['blended-tables'],
        summary: "The user's blended tables, oldest first, with how many syncs use each",
        response: { 200: z.object({ items: z.array(BlendedTable) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const rows = await ctx.db
        .selectFrom('blended_table')
        .selectAll()
        .where('owner_id', '=', principal.userId)
        .orderBy('created_at')
        .execute();
      const items = [];
      for (const row of rows) items.push(await toBlendedTable(ctx, row));
      return { items };
    },
  );
}
