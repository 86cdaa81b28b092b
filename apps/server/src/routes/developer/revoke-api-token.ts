import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { TokenParams } from './params';

export function revokeApiToken(app: RestApp, ctx: AppContext) {
  app.delete(
    '/developer/tokens/:id',
    {
      schema: {
        tags: ['developer'],
        summary: 'Revoke a personal API token: it stops working at once',
        params: TokenParams,
        response: { 200: z.object({ revoked: z.literal(true) }) },
      },
    },
    async (request) => {
      const done = await ctx.db
        .updateTable('api_token')
        .set({ revoked_at: new Date() })
        .where('id', '=', request.params.id)
        .where('owner_id', '=', principalOf(request).userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) throw notFound('API token');
      return { revoked: true as const };
    },
  );
}
