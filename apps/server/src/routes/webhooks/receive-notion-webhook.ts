import {
  notionVerificationToken,
  parseNotionWebhook,
  verifyNotionSignature,
} from '@lockstep/connectors/notion';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import { firstDeliveries, sameText, wakeSyncsReading } from '../../services/app-webhooks';
import type { SealedSecrets } from '../../services/external-connections';

/** Events older than this are refused: a captured delivery replayed later wakes nothing. */
const MAX_EVENT_AGE_MS = 10 * 60_000;

/** A Notion connection's sealed secrets: the webhook token, and until when a new one is expected. */
export type NotionWebhookSecrets = SealedSecrets & {
  notionWebhookToken?: string;
  notionHandshakeUntil?: string;
};

/** The address a Notion connection's integration sends its webhooks to (shown on the webhooks debug page). */
export function notionWebhookPath(ctx: AppContext, connectionId: string): string {
  return `/webhooks/notion/${connectionId}/${ctx.secretBox.mac(`notion-webhook:${connectionId}`)}`;
}

/**
 * POST /webhooks/notion/{connectionId}/{key}: Notion's webhooks for one connection's integration.
 * The key is a MAC only this server makes, so the address cannot be guessed. The subscription's
 * one-time handshake (`verification_token`) is kept, sealed, on the connection; every event after
 * must carry its `X-Notion-Signature` (HMAC-SHA256 of the raw body with that token). Events name
 * pages and data sources only: each sync reading one of those data sources is queued to run now.
 */
export function receiveNotionWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/notion/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const path = notionWebhookPath(ctx, /^[0-9a-f-]{36}$/.test(connectionId) ? connectionId : '');
      const connection = /^[0-9a-f-]{36}$/.test(connectionId)
        ? await ctx.db
            .selectFrom('external_connection')
            .select(['id', 'type', 'secrets'])
            .where('id', '=', connectionId)
            .executeTakeFirst()
        : undefined;
      if (connection?.type !== 'notion' || !sameText(path, `/webhooks/notion/${connectionId}/${key}`))
        return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const body = typeof request.body === 'string' ? request.body : '';
      const sealed = ctx.secretBox.open<NotionWebhookSecrets>(connection.secrets);

      // The handshake: kept, so the signatures of the events can be checked. Only while the owner
      // said one is coming: anyone holding the address could otherwise post a token of their own,
      // replace the owner's, and sign events with it.
      const handshake = notionVerificationToken(body);
      if (handshake !== null) {
        const until = sealed.notionHandshakeUntil ? Date.parse(sealed.notionHandshakeUntil) : 0;
        if (!(until > Date.now()))
          return fail(
            409,
            'Not expecting a verification token',
            'This connection is not waiting for a Notion verification token. In Lockstep, choose "Connect Notion webhooks" first, then create (or resend) the subscription in Notion.',
            'conflict',
          );
        const { notionHandshakeUntil: _spent, ...rest } = sealed;
        await ctx.db
          .updateTable('external_connection')
          .set({
            secrets: ctx.secretBox.seal({ ...rest, notionWebhookToken: handshake }),
            updated_at: new Date(),
          })
          .where('id', '=', connection.id)
          .execute();
        return reply.status(200).send({ received: true });
      }
      const signature = request.headers['x-notion-signature'];
      if (
        !sealed.notionWebhookToken ||
        !verifyNotionSignature(
          sealed.notionWebhookToken,
          Array.isArray(signature) ? signature[0] : signature,
          body,
        )
      )
        return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
      let timestamp = Number.NaN;
      let eventId: string | null = null;
      try {
        const event = JSON.parse(body) as { timestamp?: unknown; id?: unknown };
        timestamp = Date.parse(String(event.timestamp));
        eventId = typeof event.id === 'string' && event.id !== '' ? event.id : null;
      } catch {
        // unreadable: refused below
      }
      if (!Number.isFinite(timestamp) || Math.abs(Date.now() - timestamp) > MAX_EVENT_AGE_MS)
        return fail(400, 'Stale webhook event', 'This webhook event is too old to be taken.', 'validation');
      // Each event once within the window (older ones are refused as stale above).
      if (
        eventId !== null &&
        (await firstDeliveries(ctx, connection.id, [eventId], 2 * MAX_EVENT_AGE_MS)).size === 0
      )
        return reply.status(200).send({ received: true, queued: 0, duplicate: true });

      const tableIds = [
        ...new Set(parseNotionWebhook(body).flatMap((h) => (h.tableRemoteId ? [h.tableRemoteId] : []))),
      ];
      const queued = await wakeSyncsReading(ctx, connection.id, tableIds);
      return reply.status(200).send({ received: true, queued });
    },
  );
}
