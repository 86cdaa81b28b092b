import {
  MEMBERSTACK_WEBHOOK_MAX_AGE_MS,
  parseMemberstackWebhook,
  verifyMemberstackWebhook,
} from '@lockstep/connectors/memberstack';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import {
  appWebhookPath,
  connectionAtWebhookPath,
  firstDeliveries,
  wakeSyncsReading,
} from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

/** The full address a Memberstack app's webhook endpoint is given for a connection. */
export function memberstackWebhookUrl(ctx: AppContext, connectionId: string): string {
  return `${ctx.config.publicUrl}${appWebhookPath(ctx, 'memberstack', connectionId)}`;
}

/**
 * POST /webhooks/memberstack/{connectionId}/{key}: the member events of a Memberstack app's webhook
 * endpoint (Dev Tools > Webhooks, its address set to this one by the user). Memberstack sends them
 * through Svix: each delivery is checked with the endpoint's signing secret (the connection's
 * `webhookSecret` item) by Svix's library, which also refuses one more than 5 minutes old; a
 * message is taken once (`svix-id`, the same on Svix's retries). The events name members only:
 * each sync reading members (and plans, for plan events) is queued to run now, and the connector's
 * pass finds what changed.
 */
export function receiveMemberstackWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/memberstack/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const connection = await connectionAtWebhookPath(ctx, 'memberstack', connectionId, key);
      if (!connection) return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const secret = openSecrets(ctx, connection).connectionItems.webhookSecret?.trim();
      if (!secret)
        return fail(
          409,
          'No webhook signing secret for this connection',
          'This Memberstack connection has no webhook signing secret, so its webhooks cannot be checked. Paste the endpoint’s signing secret (Dev Tools > Webhooks) on the connection in Lockstep.',
          'conflict',
        );
      const body = typeof request.body === 'string' ? request.body : '';
      const headers = request.headers as Record<string, string | string[] | undefined>;
      if (!verifyMemberstackWebhook(secret, headers, body))
        return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
      const events = parseMemberstackWebhook(headers, body);
      const fresh = await firstDeliveries(
        ctx,
        connection.id,
        events.map((e) => e.eventId),
        2 * MEMBERSTACK_WEBHOOK_MAX_AGE_MS,
      );
      const tables = [...new Set(events.filter((e) => fresh.has(e.eventId)).flatMap((e) => e.tables))];
      const queued = await wakeSyncsReading(ctx, connection.id, tables);
      return reply.status(200).send({ received: true, queued, duplicates: events.length - fresh.size });
    },
  );
}
