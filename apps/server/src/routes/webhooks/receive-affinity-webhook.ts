import {
  AFFINITY_WEBHOOK_RETRY_WINDOW_MS,
  affinityTablesWoken,
  parseAffinityWebhook,
} from '@lockstep/connectors/affinity';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import { connectionAtWebhookPath, firstDeliveries, wakeSyncsReading } from '../../services/app-webhooks';

/**
 * POST /webhooks/affinity/{connectionId}/{key}: the events of the webhook subscription Lockstep made
 * in the connection's Affinity account (services/app-webhooks.ts, the port's ensureWebhook).
 *
 * Authentication is the address alone: Affinity signs nothing and sends no credentials, so the only
 * proof a delivery comes from Affinity is that it knows the key, a MAC only this server makes for
 * the connection. Any other address answers 404, whatever was wrong.
 *
 * At the right address, anything that is not an event (Affinity's check of the address when the
 * subscription is made, whose form it does not document) answers 200, or the subscription is
 * refused. An event is taken once (a hash of the raw delivery: Affinity gives no event id); one
 * sent longer ago than that is kept is ignored, so a replay cannot come back in; each sync reading
 * a table the event is about is queued to run now.
 */
export function receiveAffinityWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/affinity/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const connection = await connectionAtWebhookPath(ctx, 'affinity', connectionId, key);
      if (!connection)
        return reply
          .status(404)
          .send(envelope(404, request.url, 'No such webhook', 'This address does not exist.', 'not_found'));
      const body = typeof request.body === 'string' ? request.body : '';
      const event = parseAffinityWebhook(body);
      if (!event || event.type === 'webhook.probe')
        return reply.status(200).send({ received: true, queued: 0, duplicates: 0 });
      if (event.sentAtMs !== null && Date.now() - event.sentAtMs > AFFINITY_WEBHOOK_RETRY_WINDOW_MS)
        return reply.status(200).send({ received: true, queued: 0, duplicates: 0, stale: 1 });

      const fresh = await firstDeliveries(
        ctx,
        connection.id,
        [event.eventId],
        2 * AFFINITY_WEBHOOK_RETRY_WINDOW_MS,
      );
      if (!fresh.has(event.eventId))
        return reply.status(200).send({ received: true, queued: 0, duplicates: 1 });
      const tables = await ctx.db
        .selectFrom('external_table')
        .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
        .select('external_table.remote_id')
        .where('external_base.external_connection_id', '=', connection.id)
        .execute();
      const woken = affinityTablesWoken(
        event,
        tables.map((t) => t.remote_id),
      );
      const queued = await wakeSyncsReading(ctx, connection.id, [...new Set(woken)]);
      return reply.status(200).send({ received: true, queued, duplicates: 0 });
    },
  );
}
