import type { FastifyInstance } from 'fastify';
import type Stripe from 'stripe';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import {
  applySubscriptionState,
  readEventTarget,
  STRIPE_EVENT_KEEP_DAYS,
  STRIPE_WEBHOOK_TOLERANCE_SECONDS,
  stripeClient,
} from '../../services/billing';

/**
 * POST /webhooks/stripe: the events of Lockstep's own Stripe account (payments). Each delivery is
 * checked with LOCKSTEP_STRIPE_WEBHOOK_SECRET (Stripe-Signature, 300 s tolerance) over the raw
 * body; each event id is taken once (stripe_webhook_event, in the same transaction as its effect,
 * so a failed one is taken again when Stripe retries). The subscription an event names is read
 * from Stripe, so events applied in any order leave its latest state.
 */
export function receiveStripeBillingWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post('/webhooks/stripe', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const fail = (status: number, message: string, userFacing: string, code: string) =>
      reply.status(status).send(envelope(status, path, message, userFacing, code));
    const config = ctx.config.billing;
    if (!config)
      return fail(
        404,
        'Payments are not set up on this server',
        'This server takes no Stripe webhooks: payments are not set up on it.',
        'not_found',
      );
    const stripe = stripeClient(config);
    const body = typeof request.body === 'string' ? request.body : '';
    const header = request.headers['stripe-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    if (!signature)
      return fail(401, 'No Stripe-Signature header', 'The webhook is not signed.', 'auth_invalid');
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(
        body,
        signature,
        config.webhookSecret,
        STRIPE_WEBHOOK_TOLERANCE_SECONDS,
      );
    } catch (error) {
      const stale = error instanceof Error && /tolerance/i.test(error.message);
      if (stale)
        return fail(
          400,
          'Stale webhook delivery',
          'This webhook delivery is too old to be taken.',
          'validation',
        );
      return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
    }

    const seen = await ctx.db
      .selectFrom('stripe_webhook_event')
      .select('event_id')
      .where('event_id', '=', event.id)
      .executeTakeFirst();
    if (seen) return reply.status(200).send({ received: true, duplicate: true });

    // Read before the transaction: no database connection held over a call to Stripe.
    const read = await readEventTarget(stripe, event);
    if (!read) return reply.status(200).send({ received: true, applied: false });
    const result = await ctx.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('stripe_webhook_event')
        .where('received_at', '<', new Date(Date.now() - STRIPE_EVENT_KEEP_DAYS * 24 * 60 * 60 * 1000))
        .execute();
      const taken = await trx
        .insertInto('stripe_webhook_event')
        .values({ event_id: event.id, type: event.type })
        .onConflict((oc) => oc.column('event_id').doNothing())
        .returning('event_id')
        .executeTakeFirst();
      if (!taken) return { duplicate: true as const };
      return applySubscriptionState(trx, config, {
        ...read,
        eventAt: new Date(event.created * 1000),
        now: new Date(),
      });
    });
    if ('reason' in result && result.reason)
      request.log.warn(
        { eventId: event.id, type: event.type, reason: result.reason },
        'Stripe event not applied',
      );
    return reply.status(200).send({ received: true, ...result });
  });
}
