import { PatchWebhookBody, WebhookSubscription } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toSubscription } from '../../services/webhooks-out';
import { findSubscription, WebhookParams } from './params';

export function patchWebhook(app: RestApp, ctx: AppContext) {
  app.patch(
    '/developer/webhooks/:id',
    {
      schema: {
        tags: ['developer'],
        summary: 'Pause or resume a webhook subscription, or change its events',
        params: WebhookParams,
        body: PatchWebhookBody,
        response: { 200: WebhookSubscription },
      },
    },
    async (request) => {
      const row = await findSubscription(ctx.db, principalOf(request), request.params.id);
      const { paused, events } = request.body;
      const updated = await ctx.db
        .updateTable('webhook_subscription')
        .set({
          ...(paused !== undefined ? { paused } : {}),
          ...(events !== undefined ? { events } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSubscription(updated);
    },
  );
}
