import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  baseConnection,
  LISTENED_TYPES,
  readCaptureState,
  realTimeMechanism,
} from '../../services/change-capture-debug';
import { findExternalBase } from '../../services/external-bases';
import { hubspotWebhookUrl } from '../webhooks/receive-hubspot-webhook';
import { memberstackWebhookUrl } from '../webhooks/receive-memberstack-webhook';
import { notionWebhookPath } from '../webhooks/receive-notion-webhook';
import { stripeWebhookUrl } from '../webhooks/receive-stripe-webhook';
import { ExternalBaseParams } from './params';

export const RealTimeMechanism = z.enum(['postgres_trigger_notify', 'postgres_logical_decoding', 'polling']);

export function getWebhooksDebug(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-bases/:id/webhooks/debug',
    {
      schema: {
        tags: ['external-bases', 'debug'],
        summary:
          'How this app tells Lockstep about changes (owner or staff): for PostgreSQL and Supabase, the change-capture trigger per table and the LISTEN channel',
        params: ExternalBaseParams,
        response: {
          200: z.object({
            externalBaseId: Uuid,
            type: z.string(),
            webhooksEnabled: z.boolean(),
            mechanism: RealTimeMechanism,
            channel: z.string().nullable(),
            /** Whether the worker's change listener LISTENs for this base (sync on, a listened type). */
            listened: z.boolean(),
            tables: z.array(
              z.object({
                externalTableId: Uuid,
                remoteId: z.string(),
                name: z.string(),
                triggerInstalled: z.boolean().nullable(),
                triggerEnabled: z.boolean().nullable(),
              }),
            ),
            /**
             * Notion: the address to give the integration's webhook subscription (Notion's settings →
             * Webhooks); HubSpot: the private app's webhook target URL; Stripe: a webhook
             * endpoint's URL (Dashboard > Developers > Webhooks). Changes then wake the sync
             * at once instead of at its next poll.
             */
            webhookUrl: z.string().nullable(),
            /** Why the app's side could not be read (the rest of the answer still holds). */
            error: z.string().nullable(),
          }),
        },
      },
    },
    async (request) => {
      const base = await findExternalBase(ctx.db, principalOf(request), request.params.id);
      const core = await ctx.db
        .selectFrom('core_base')
        .select('sync_state')
        .where('id', '=', base.core_base_id)
        .executeTakeFirstOrThrow();
      const tables = await ctx.db
        .selectFrom('external_table')
        .select(['id', 'remote_id', 'name'])
        .where('external_base_id', '=', base.id)
        .orderBy('name')
        .execute();
      const connection = await baseConnection(ctx, base.external_connection_id);
      const mechanism = realTimeMechanism(base.type, connection);
      let state: Awaited<ReturnType<typeof readCaptureState>> | null = null;
      let error: string | null = null;
      if (mechanism !== 'polling' && connection) {
        try {
          state = await readCaptureState(
            connection,
            tables.map((t) => t.remote_id),
          );
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
      }
      return {
        externalBaseId: base.id,
        type: base.type,
        webhooksEnabled: base.webhooks_enabled,
        mechanism,
        channel: mechanism === 'polling' ? null : 'lockstep_changes',
        webhookUrl: !base.external_connection_id
          ? null
          : base.type === 'notion'
            ? `${ctx.config.publicUrl}${notionWebhookPath(ctx, base.external_connection_id)}`
            : base.type === 'hubspot'
              ? hubspotWebhookUrl(ctx, base.external_connection_id)
              : base.type === 'stripe'
                ? stripeWebhookUrl(ctx, base.external_connection_id)
                : base.type === 'memberstack'
                  ? memberstackWebhookUrl(ctx, base.external_connection_id)
                  : null,
        listened: LISTENED_TYPES.has(base.type) && core.sync_state === 'on',
        tables: tables.map((t) => {
          const s = state?.tables.get(t.remote_id);
          return {
            externalTableId: t.id,
            remoteId: t.remote_id,
            name: t.name,
            triggerInstalled: s ? s.triggerInstalled : null,
            triggerEnabled: s ? s.triggerEnabled : null,
          };
        }),
        error,
      };
    },
  );
}
