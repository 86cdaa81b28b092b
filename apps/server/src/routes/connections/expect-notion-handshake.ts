import { AbsoluteUrl, IsoTimestamp } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findConnection } from '../../services/external-connections';
import { type NotionWebhookSecrets, notionWebhookPath } from '../webhooks/receive-notion-webhook';
import { ConnectionParams } from './params';

/** How long a connection waits for Notion's verification token once its owner starts the setup. */
const HANDSHAKE_WINDOW_MS = 15 * 60_000;

/**
 * POST /external-connections/{id}/notion-webhook/expect-handshake: the owner is about to create (or
 * resend) the webhook subscription in Notion. For 15 minutes the connection takes one verification
 * token, which then replaces any earlier one; outside that window a token posted to the address
 * is refused, so holding the address is not enough to take the webhook over.
 */
export function expectNotionHandshake(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-connections/:id/notion-webhook/expect-handshake',
    {
      schema: {
        tags: ['connections'],
        summary: 'Wait 15 minutes for the verification token of a Notion webhook subscription (owner)',
        params: ConnectionParams,
        response: {
          200: z.object({
            webhookUrl: AbsoluteUrl,
            expectingUntil: IsoTimestamp,
          }),
        },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.params.id);
      if (row.type !== 'notion')
        throw new HttpError(
          400,
          'Not a Notion connection',
          'Only Notion connections take webhook subscriptions this way.',
          'validation',
        );
      const sealed = ctx.secretBox.open<NotionWebhookSecrets>(row.secrets);
      const until = new Date(Date.now() + HANDSHAKE_WINDOW_MS).toISOString();
      await ctx.db
        .updateTable('external_connection')
        .set({
          secrets: ctx.secretBox.seal({ ...sealed, notionHandshakeUntil: until }),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .execute();
      return {
        webhookUrl: `${ctx.config.publicUrl}${notionWebhookPath(ctx, row.id)}`,
        expectingUntil: until,
      };
    },
  );
}
