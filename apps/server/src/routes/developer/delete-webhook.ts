import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSubscription, WebhookParams } from './params';

export function deleteWebhook(app: RestApp, ctx: AppContext) {
  app.delete(
    '/developer/webhooks/:id',
    {
      schema: {
        tags: ['developer'],
        summary: 'Delete a webhook subscription and its delivery log; queued deliveries are dropped',
        params: WebhookParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const row = await findSubscription(ctx.db, principalOf(request), request.params.id);
      await ctx.db.deleteFrom('webhook_subscription').where('id', '=', row.id).execute();
      return { deleted: true as const };
    },
  );
}
