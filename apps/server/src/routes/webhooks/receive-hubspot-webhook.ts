import {
  HUBSPOT_WEBHOOK_MAX_AGE_MS,
  HUBSPOT_WEBHOOK_READ_DELAY_S,
  parseHubSpotWebhook,
  verifyHubSpotSignatureV3,
} from '@lockstep/connectors/hubspot';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import { appWebhookPath, firstDeliveries, sameText, wakeSyncsReading } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

/** The full address HubSpot is given for a connection (what its v3 signature covers). */
export function hubspotWebhookUrl(ctx: AppContext, connectionId: string): string {
  return `${ctx.config.publicUrl}${appWebhookPath(ctx, 'hubspot', connectionId)}`;
}

/**
 * POST /webhooks/hubspot/{connectionId}/{key}: the CRM events of the HubSpot app behind one
 * connection (a private app's Webhooks tab, target URL set to this address). Each delivery is
 * checked with the app's client secret (the connection's `clientSecret` item) by HubSpot's v3
 * signature and refused when older than 5 minutes; event ids are taken once. The events only name
 * objects: each sync reading a named object type is queued to run a few seconds later, once
 * HubSpot's search index (which the incremental read uses) holds the change.
 */
export function receiveHubSpotWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/hubspot/:connectionId/:key',
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
      const path = appWebhookPath(ctx, 'hubspot', valid ? connectionId : '');
      if (connection?.type !== 'hubspot' || !sameText(path, `/webhooks/hubspot/${connectionId}/${key}`))
        return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const clientSecret = openSecrets(ctx, connection).connectionItems.clientSecret?.trim();
      if (!clientSecret)
        return fail(
          409,
          'No client secret for this connection',
          "This HubSpot connection has no client secret, so its webhooks cannot be checked. Add the private app's client secret (its Auth tab) to the connection in Lockstep.",
          'conflict',
        );
      const body = typeof request.body === 'string' ? request.body : '';
      const header = (name: string) => {
        const v = request.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const verdict = verifyHubSpotSignatureV3({
        clientSecret,
        method: request.method,
        uri: hubspotWebhookUrl(ctx, connection.id),
        body,
        timestamp: header('x-hubspot-request-timestamp'),
        signature: header('x-hubspot-signature-v3'),
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

      const events = parseHubSpotWebhook(body);
      const fresh = await firstDeliveries(
        ctx,
        connection.id,
        events.map((e) => e.eventId),
        2 * HUBSPOT_WEBHOOK_MAX_AGE_MS,
      );
      const types = [...new Set(events.filter((e) => fresh.has(e.eventId)).map((e) => e.objectType))];
      const queued = await wakeSyncsReading(ctx, connection.id, types, {
        startAfterSeconds: HUBSPOT_WEBHOOK_READ_DELAY_S,
      });
      return reply.status(200).send({ received: true, queued, duplicates: events.length - fresh.size });
    },
  );
}
