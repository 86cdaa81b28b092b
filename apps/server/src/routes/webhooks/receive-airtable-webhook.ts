import { verifyAirtableNotification } from '@lockstep/connectors/airtable';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../../http/context';
import { envelope } from '../../http/error-envelope';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { appWebhookPath, type SealedWebhooks, sameText } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

/** Notifications older than this are refused: a captured ping replayed later wakes nothing. */
const MAX_PING_AGE_MS = 10 * 60_000;

/**
 * POST /webhooks/airtable/{connectionId}/{key}: Airtable's notification pings for the webhooks this
 * connection made (services/app-webhooks.ts). A ping names its base and webhook and carries no
 * data; its `X-Airtable-Content-MAC` is checked with that webhook's secret, then each sync reading
 * the base is queued to run now (it reads what changed since its cursor).
 */
export function receiveAirtableWebhook(app: FastifyInstance, ctx: AppContext) {
  app.post<{ Params: { connectionId: string; key: string } }>(
    '/webhooks/airtable/:connectionId/:key',
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
      const expected = appWebhookPath(ctx, 'airtable', valid ? connectionId : '');
      if (connection?.type !== 'airtable' || !sameText(expected, `/webhooks/airtable/${connectionId}/${key}`))
        return fail(404, 'No such webhook', 'This address does not exist.', 'not_found');
      const body = typeof request.body === 'string' ? request.body : '';
      let ping: { base?: { id?: string }; webhook?: { id?: string }; timestamp?: string } = {};
      try {
        ping = JSON.parse(body);
      } catch {
        return fail(400, 'Not a notification', 'This is not an Airtable notification.', 'validation');
      }
      const baseId = ping.base?.id ?? '';
      const hook = (openSecrets(ctx, connection) as ReturnType<typeof openSecrets> & SealedWebhooks)
        .appWebhooks?.[baseId];
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? (v[0] ?? '') : (v ?? '')]),
      );
      if (
        !hook?.macSecretBase64 ||
        hook.id !== ping.webhook?.id ||
        !verifyAirtableNotification(hook.macSecretBase64, headers, body)
      )
        return fail(401, 'Bad webhook signature', 'The webhook signature does not match.', 'auth_invalid');
      const at = Date.parse(String(ping.timestamp));
      if (!Number.isFinite(at) || Math.abs(Date.now() - at) > MAX_PING_AGE_MS)
        return fail(400, 'Stale notification', 'This notification is too old to be taken.', 'validation');
      const syncs = (
        await sql<{
          id: string;
        }>`select distinct cb.id from external_base b join core_base cb on cb.id = b.core_base_id
           where b.external_connection_id = ${connection.id}::uuid and b.remote_id = ${baseId} and cb.sync_state = 'on'`.execute(
          ctx.db,
        )
      ).rows;
      for (const s of syncs) await requestSyncRun(ctx.boss, s.id, 'webhook', PRIORITY.webhook);
      return reply.status(200).send({ received: true, queued: syncs.length });
    },
  );
}
