import { Paged, PageQuery, WebhookDeliveryAttempt } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toAttempt } from '../../services/webhooks-out';
import { findSubscription, WebhookParams } from './params';

export function listWebhookDeliveries(app: RestApp, ctx: AppContext) {
  app.get(
    '/developer/webhooks/:id/deliveries',
    {
      schema: {
        tags: ['developer'],
        summary: "A subscription's delivery log, newest first: one row per attempt",
        params: WebhookParams,
        querystring: PageQuery.strict(),
        response: { 200: Paged(WebhookDeliveryAttempt) },
      },
    },
    async (request) => {
      const row = await findSubscription(ctx.db, principalOf(request), request.params.id);
      const { skip, take } = request.query;
      const base = ctx.db.selectFrom('webhook_delivery_attempt').where('subscription_id', '=', row.id);
      const [items, total] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('attempt', 'desc')
          .offset(skip)
          .limit(take)
          .execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: items.map(toAttempt), total: Number(total.n), skip, take };
    },
  );
}
