import {
  isWebflowOAuth,
  parseWebflowWebhook,
  verifyWebflowSignature,
  WEBFLOW_WEBHOOK_MAX_AGE_MS,
  webflowDeliveryId,
  webflowWebhookSecrets,
} from '@lockstep/connectors/webflow';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import {
  connectionAtWebhookPath,
  firstDeliveries,
  sealedAppWebhooks,
  wakeSyncsReading,
} from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

/**
 * POST /webhooks/webflow/{connectionId}/{key}: the CMS item events of the webhooks Lockstep made on
 * the connection's sites (services/app-webhooks.ts). Each delivery's `x-webflow-signature` is
 * checked, over `${x-webflow-timestamp}:${body}`, with the keys that may sign it: this server's
 * Webflow app's client secret for a connection signed in with Webflow, the webhooks' own secrets
 * for one with a site token; a delivery more than 5 minutes old is refused, and each is taken once.
 * The event names its collection: each sync reading that collection through the connection is
 * queued to run now (the connector's read finds what changed).
 */
export function receiveWebflowWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/webflow/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const connection = await connectionAtWebhookPath(ctx, 'webflow', connectionId, key);
      if (!connection) return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const header = (name: string) => {
        const v = request.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const body = typeof request.body === 'string' ? request.body : '';
      const items = openSecrets(ctx, connection).connectionItems;
      const keys = [
        ...(isWebflowOAuth(items) && ctx.config.webflow.clientSecret
          ? [ctx.config.webflow.clientSecret]
          : []),
        ...sealedAppWebhooks(ctx, connection).flatMap((hook) => Object.values(webflowWebhookSecrets(hook))),
      ];
      const timestamp = header('x-webflow-timestamp');
      const verdict = verifyWebflowSignature({
        keys,
        body,
        timestamp,
        signature: header('x-webflow-signature'),
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
      const event = parseWebflowWebhook(body);
      if (!event)
        return fail(400, 'Not a webhook delivery', 'This is not a Webflow webhook delivery.', 'validation');

      const id = webflowDeliveryId(timestamp as string, body);
      const fresh = await firstDeliveries(ctx, connection.id, [id], 2 * WEBFLOW_WEBHOOK_MAX_AGE_MS);
      if (!fresh.has(id)) return reply.status(200).send({ received: true, queued: 0, duplicates: 1 });
      const queued = await wakeSyncsReading(
        ctx,
        connection.id,
        event.collectionId ? [event.collectionId] : [],
      );
      return reply.status(200).send({ received: true, queued, duplicates: 0 });
    },
  );
}
