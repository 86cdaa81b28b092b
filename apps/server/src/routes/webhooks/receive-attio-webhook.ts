import {
  ATTIO_WEBHOOK_RETRY_WINDOW_MS,
  attioDeliveryId,
  parseAttioWebhook,
  verifyAttioSignature,
} from '@lockstep/connectors/attio';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import {
  connectionAtWebhookPath,
  firstDeliveries,
  sealedAppWebhooks,
  wakeSyncsReading,
} from '../../services/app-webhooks';

/**
 * The tables (object api_slugs) of a connection's Attio bases for these object ids: discovery
 * keeps each object's id (`attioObjectId`, from Attio's object list) with its table.
 */
async function tablesOfObjects(
  ctx: AppContext,
  connectionId: string,
  objectIds: string[],
): Promise<string[]> {
  if (objectIds.length === 0) return [];
  const rows = await sql<{ remote_id: string }>`select distinct t.remote_id from external_table t
      join external_base b on b.id = t.external_base_id
     where b.external_connection_id = ${connectionId}::uuid
       and t.extras->>'attioObjectId' = any(${objectIds}::text[])`.execute(ctx.db);
  return rows.rows.map((r) => r.remote_id);
}

/**
 * POST /webhooks/attio/{connectionId}/{key}: the record events of the webhook Lockstep made in the
 * connection's Attio workspace (services/app-webhooks.ts). Each delivery's `Attio-Signature` is
 * checked with that webhook's secret; a message is taken once (its `Idempotency-Key`, the same on
 * Attio's retries). The events name objects by id: each sync reading one of those objects is
 * queued to run now (the connector's scan finds what changed).
 */
export function receiveAttioWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/attio/:connectionId/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      const { connectionId, key } = request.params;
      const fail = (status: number, message: string, userFacing: string, code: string) =>
        reply.status(status).send(envelope(status, request.url, message, userFacing, code));
      const connection = await connectionAtWebhookPath(ctx, 'attio', connectionId, key);
      if (!connection) return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const header = (name: string) => {
        const v = request.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const body = typeof request.body === 'string' ? request.body : '';
      const delivery = parseAttioWebhook(body);
      const signature = header('attio-signature') ?? header('x-attio-signature');
      const signed = sealedAppWebhooks(ctx, connection).some(
        (hook) =>
          hook.secret &&
          (!delivery?.webhookId || hook.id === delivery.webhookId) &&
          verifyAttioSignature(hook.secret, body, signature),
      );
      if (!signed)
        return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
      if (!delivery)
        return fail(400, 'Not a webhook delivery', 'This is not an Attio webhook delivery.', 'validation');

      const id = attioDeliveryId(header('idempotency-key'), body);
      const fresh = await firstDeliveries(ctx, connection.id, [id], ATTIO_WEBHOOK_RETRY_WINDOW_MS);
      if (!fresh.has(id)) return reply.status(200).send({ received: true, queued: 0, duplicates: 1 });
      const tables = await tablesOfObjects(ctx, connection.id, delivery.objectIds);
      const queued = await wakeSyncsReading(ctx, connection.id, tables);
      return reply.status(200).send({ received: true, queued, duplicates: 0 });
    },
  );
}
