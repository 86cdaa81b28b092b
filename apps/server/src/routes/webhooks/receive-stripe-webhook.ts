import {
  parseStripeWebhook,
  STRIPE_WEBHOOK_TOLERANCE_MS,
  verifyStripeSignature,
} from '@lockstep/connectors/stripe';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import { appWebhookPath, firstDeliveries, sameText, wakeSyncsReading } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

/** The address a Stripe webhook endpoint is given for a connection. */
export function stripeWebhookUrl(ctx: AppContext, connectionId: string): string {
  return `${ctx.config.publicUrl}${appWebhookPath(ctx, 'stripe', connectionId)}`;
}

/**
 * POST /webhooks/stripe/{connectionId}/{key}: the events of a Stripe webhook endpoint made for one
 * connection (Dashboard > Developers > Webhooks, its URL set to this address). Each delivery is
 * checked with the endpoint's signing secret (the connection's `webhookSecret` item) by Stripe's
 * `Stripe-Signature` and refused when more than 5 minutes off; event ids are taken once. An event
 * only wakes each sync reading its table: the run reads the change from Stripe's events list.
 */
export function receiveStripeWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/stripe/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const valid = /^[0-9a-f-]{36}$/.test(connectionId);
      const connection = valid
        ? await ctx.db
            .selectFrom('external_connection')
            .selectAll()
            .where('id', '=', connectionId)
            .executeTakeFirst()
        : undefined;
      const path = appWebhookPath(ctx, 'stripe', valid ? connectionId : '');
      if (connection?.type !== 'stripe' || !sameText(path, `/webhooks/stripe/${connectionId}/${key}`))
        return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const secret = openSecrets(ctx, connection).connectionItems.webhookSecret?.trim();
      if (!secret)
        return fail(
          409,
          'No webhook signing secret for this connection',
          "This Stripe connection has no webhook signing secret, so its webhooks cannot be checked. Add the endpoint's signing secret (whsec_…) to the connection in Lockstep.",
          'conflict',
        );
      const body = typeof request.body === 'string' ? request.body : '';
      const header = request.headers['stripe-signature'];
      const verdict = verifyStripeSignature({
        secret,
        body,
        header: Array.isArray(header) ? header[0] : header,
      });
      if (verdict === 'bad_signature')
        return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
      if (verdict === 'stale')
        return fail(
          400,
          'Stale webhook delivery',
          'This webhook delivery is too old to be taken.',
          'validation',
        );
      const event = parseStripeWebhook(body);
      // Events of objects Lockstep does not sync are answered 200, so Stripe does not retry them.
      if (!event) return reply.status(200).send({ received: true, queued: 0, duplicates: 0 });
      const fresh = await firstDeliveries(
        ctx,
        connection.id,
        [event.eventId],
        2 * STRIPE_WEBHOOK_TOLERANCE_MS,
      );
      const queued = fresh.has(event.eventId) ? await wakeSyncsReading(ctx, connection.id, [event.table]) : 0;
      return reply.status(200).send({ received: true, queued, duplicates: fresh.has(event.eventId) ? 0 : 1 });
    },
  );
}
