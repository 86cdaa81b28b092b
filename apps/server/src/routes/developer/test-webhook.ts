import { WebhookDeliveryAttempt } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { deliverAndLog, newEvent, toAttempt } from '../../services/webhooks-out';
import { findSubscription, WebhookParams } from './params';

export function testWebhook(app: RestApp, ctx: AppContext) {
  app.post(
    '/developer/webhooks/:id/test',
    {
      schema: {
        tags: ['developer'],
        summary: 'Send a test event now (one attempt, not retried) and answer how it went',
        params: WebhookParams,
        response: { 200: WebhookDeliveryAttempt },
      },
    },
    async (request) => {
      const row = await findSubscription(ctx.db, principalOf(request), request.params.id);
      const event = newEvent('test', { subscriptionId: row.id, message: 'A test event from Lockstep.' });
      await deliverAndLog(ctx.db, ctx.secretBox, row, event, 1);
      const attempt = await ctx.db
        .selectFrom('webhook_delivery_attempt')
        .selectAll()
        .where('subscription_id', '=', row.id)
        .where('event_id', '=', event.id)
        .executeTakeFirstOrThrow();
      return toAttempt(attempt);
    },
  );
}
