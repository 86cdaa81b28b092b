import {
  PIPEDRIVE_WEBHOOK_RETRY_WINDOW_MS,
  parsePipedriveWebhook,
  verifyPipedriveBasicAuth,
} from '@lockstep/connectors/pipedrive';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import {
  connectionAtWebhookPath,
  firstDeliveries,
  sealedAppWebhooks,
  wakeSyncsReading,
} from '../../services/app-webhooks';

/**
 * POST /webhooks/pipedrive/{connectionId}/{key}: the events (webhooks v2) of the webhooks Lockstep
 * made in the connection's Pipedrive company, one per synced object (services/app-webhooks.ts).
 * Pipedrive signs nothing: a delivery must carry the HTTP Basic credentials those webhooks were made
 * with (a random password per connection, kept sealed). An event is taken once (`meta.id`, the same
 * on Pipedrive's retries); each sync reading its object's table is queued to run now.
 */
export function receivePipedriveWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/pipedrive/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const connection = await connectionAtWebhookPath(ctx, 'pipedrive', connectionId, key);
      if (!connection) return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const authorization = request.headers.authorization;
      const authorized = sealedAppWebhooks(ctx, connection).some(
        (hook) => hook.secret && verifyPipedriveBasicAuth(hook.secret, authorization),
      );
      if (!authorized) {
        reply.header('www-authenticate', 'Basic realm="lockstep"');
        return fail(401, 'Bad webhook credentials', 'The webhook credentials do not match.', 'auth_invalid');
      }
      const body = typeof request.body === 'string' ? request.body : '';
      const event = parsePipedriveWebhook(body);
      if (!event)
        return fail(400, 'Not a webhook event', 'This is not a Pipedrive webhook event.', 'validation');

      const fresh = await firstDeliveries(
        ctx,
        connection.id,
        [event.eventId],
        PIPEDRIVE_WEBHOOK_RETRY_WINDOW_MS,
      );
      if (!fresh.has(event.eventId))
        return reply.status(200).send({ received: true, queued: 0, duplicates: 1 });
      const queued = event.tableRemoteId
        ? await wakeSyncsReading(ctx, connection.id, [event.tableRemoteId])
        : 0;
      return reply.status(200).send({ received: true, queued, duplicates: 0 });
    },
  );
}
