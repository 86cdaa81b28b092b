import { CreatedWebhookSubscription, CreateWebhookBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { assertReceiverAllowed, newWebhookSecret, toSubscription } from '../../services/webhooks-out';

export function createWebhook(app: RestApp, ctx: AppContext) {
  app.post(
    '/developer/webhooks',
    {
      schema: {
        tags: ['developer'],
        summary: 'Subscribe a URL to events of your syncs (the signing secret is in this answer only)',
        description:
          'Each delivery is a JSON POST `{id, type, createdAt, data}` with the header `Lockstep-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>`, retried with exponential backoff (5 attempts) until the receiver answers 2xx within 10 s.',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookSubscription },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await assertReceiverAllowed(request.body.url);
      const secret = newWebhookSecret();
      const row = await ctx.db
        .insertInto('webhook_subscription')
        .values({
          owner_id: principal.userId,
          url: request.body.url,
          events: request.body.events,
          secret_sealed: ctx.secretBox.seal(secret),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send({ ...toSubscription(row), secret });
    },
  );
}
