import { ApiToken } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toApiToken } from '../../services/api-tokens';

export function listApiTokens(app: RestApp, ctx: AppContext) {
  app.get(
    '/developer/tokens',
    {
      schema: {
        tags: ['developer'],
        summary: 'Your personal API tokens (not revoked), newest first: name, scopes, prefix, last use',
        response: { 200: z.object({ items: z.array(ApiToken) }) },
      },
    },
    async (request) => {
      const rows = await ctx.db
        .selectFrom('api_token')
        .selectAll()
        .where('owner_id', '=', principalOf(request).userId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .limit(200)
        .execute();
      return { items: rows.map(toApiToken) };
    },
  );
}
