import { WebhookSubscription } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toSubscription } from '../../services/webhooks-out';

export function listWebhooks(app: RestApp, ctx: AppContext) {
  app.get(
    '/developer/webhooks',
    {
      schema: {
        tags: ['developer'],
        summary: 'Your webhook subscriptions, newest first',
        response: { 200: z.object({ items: z.array(WebhookSubscription) }) },
      },
    },
    async (request) => {
      const rows = await ctx.db
        .selectFrom('webhook_subscription')
        .selectAll()
        .where('owner_id', '=', principalOf(request).userId)
        .orderBy('created_at', 'desc')
        .limit(200)
        .execute();
      return { items: rows.map(toSubscription) };
    },
  );
}
