import { timingSafeEqual } from 'node:crypto';
import { ConnectorType } from '@lockstep/contract';
import { sql } from 'kysely';
import type { AppWebhook } from '../connectors/connector-port';
import type { AppContext } from '../http/context';
import { PRIORITY, requestSyncRun } from '../jobs/sync-run';
import { openSecrets, portContext } from './external-connections';

/** What a connection keeps about the webhooks its apps made (sealed with its secrets): per base. */
export type SealedWebhooks = { appWebhooks?: Record<string, AppWebhook> };

/** Compares a webhook address (or key) in constant time. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The event ids delivered to a connection for the first time (a retried or replayed delivery's
 * are left out). Ids are kept for `keepMs`, twice the app's freshness window: an older replay is
 * refused as stale before it gets here.
 */
export async function firstDeliveries(
  ctx: AppContext,
  connectionId: string,
  eventIds: string[],
  keepMs: number,
): Promise<Set<string>> {
  await ctx.db
    .deleteFrom('app_webhook_event')
    .where('external_connection_id', '=', connectionId)
    .where(sql<boolean>`received_at < ${new Date(Date.now() - keepMs)}`)
    .execute();
  if (eventIds.length === 0) return new Set();
  const inserted = await ctx.db
    .insertInto('app_webhook_event')
    .values([...new Set(eventIds)].map((id) => ({ external_connection_id: connectionId, event_id: id })))
    .onConflict((oc) => oc.doNothing())
    .returning('event_id')
    .execute();
  return new Set(inserted.map((r) => r.event_id));
}

/**
 * Queues a run of every sync that is on and reads one of these tables through this connection (a
 * webhook's wake-up); answers how many. `startAfterSeconds` lets an app's index catch up first.
 */
export async function wakeSyncsReading(
  ctx: AppContext,
  connectionId: string,
  tableRemoteIds: string[],
  options: { startAfterSeconds?: number } = {},
): Promise<number> {
  if (tableRemoteIds.length === 0) return 0;
  const syncs = (
    await sql<{ id: string }>`select distinct cb.id from external_table t
        join external_base b on b.id = t.external_base_id
        join core_base cb on cb.id = b.core_base_id
       where b.external_connection_id = ${connectionId}::uuid and t.remote_id = any(${tableRemoteIds}::text[])
         and cb.sync_state = 'on'`.execute(ctx.db)
  ).rows;
  for (const s of syncs) await requestSyncRun(ctx.boss, s.id, 'webhook', PRIORITY.webhook, options);
  return syncs.length;
}

/** The apps that send webhooks to an address of this server made by appWebhookPath. */
export type WebhookApp =
  | 'airtable'
  | 'hubspot'
  | 'attio'
  | 'pipedrive'
  | 'affinity'
  | 'stripe'
  | 'memberstack'
  | 'webflow';

/** The address an app sends a connection's webhooks to: a key only this server can make. */
export function appWebhookPath(ctx: AppContext, app: WebhookApp, connectionId: string): string {
  return `/webhooks/${app}/${connectionId}/${ctx.secretBox.mac(`${app}-webhook:${connectionId}`)}`;
}

/**
 * The connection a webhook address names, when it is one of `app`'s and the key is the one this
 * server made for it; null otherwise (the route answers 404, whatever was wrong).
 */
export async function connectionAtWebhookPath(
  ctx: AppContext,
  app: WebhookApp,
  connectionId: string,
  key: string,
) {
  const valid = /^[0-9a-f-]{36}$/.test(connectionId);
  const connection = valid
    ? await ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', connectionId)
        .executeTakeFirst()
    : undefined;
  const expected = appWebhookPath(ctx, app, valid ? connectionId : '');
  if (connection?.type !== app || !sameText(expected, `/webhooks/${app}/${connectionId}/${key}`)) return null;
  return connection;
}

/** The webhooks a connection's apps made (sealed with its secrets), whatever the base. */
export function sealedAppWebhooks(ctx: AppContext, connection: { secrets: string }): AppWebhook[] {
  const sealed = ctx.secretBox.open<SealedWebhooks>(connection.secrets);
  return Object.values(sealed.appWebhooks ?? {});
}

/** The app types whose webhooks Lockstep makes by API: their ports have `ensureWebhook`. */
export function apiWebhookTypes(ctx: AppContext): ConnectorType[] {
  return ConnectorType.options.filter((type) => Boolean(ctx.connectors.get(type)?.ensureWebhook));
}

/**
 * Makes sure every base of the sync whose app makes webhooks by API (Airtable, Attio, Pipedrive,
 * Affinity:
 * the ports with `ensureWebhook`) has one pointing at this server, with time left (Airtable's last
 * 7 days): created when missing or deleted in the app, refreshed when close to expiry. Best effort:
 * a refusal leaves polling to carry the changes, and is returned.
 */
export async function ensureAppWebhooks(ctx: AppContext, coreBaseId: string): Promise<string[]> {
  const types = apiWebhookTypes(ctx);
  if (types.length === 0) return [];
  const bases = await ctx.db
    .selectFrom('external_base')
    .innerJoin('external_connection', 'external_connection.id', 'external_base.external_connection_id')
    .select([
      'external_base.remote_id',
      'external_connection.id as connection_id',
      'external_connection.type',
    ])
    .where('external_base.core_base_id', '=', coreBaseId)
    .where('external_base.type', 'in', types)
    .execute();
  const problems: string[] = [];
  for (const b of bases) {
    const port = ctx.connectors.get(b.type as ConnectorType);
    if (!port?.ensureWebhook) continue;
    const row = await ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', b.connection_id)
      .executeTakeFirstOrThrow();
    const sealed = openSecrets(ctx, row) as ReturnType<typeof openSecrets> & SealedWebhooks;
    const known = sealed.appWebhooks?.[b.remote_id] ?? null;
    const url = `${ctx.config.publicUrl}${appWebhookPath(ctx, b.type as WebhookApp, b.connection_id)}`;
    try {
      const hook = await port.ensureWebhook(
        sealed.connectionItems,
        b.remote_id,
        url,
        known,
        portContext(ctx, row),
      );
      if (hook === known || JSON.stringify(hook) === JSON.stringify(known)) continue;
      // Read again: the port may have saved renewed tokens meanwhile.
      const latest = openSecrets(
        ctx,
        await ctx.db
          .selectFrom('external_connection')
          .selectAll()
          .where('id', '=', b.connection_id)
          .executeTakeFirstOrThrow(),
      ) as ReturnType<typeof openSecrets> & SealedWebhooks;
      await ctx.db
        .updateTable('external_connection')
        .set({
          secrets: ctx.secretBox.seal({
            ...latest,
            appWebhooks: { ...latest.appWebhooks, [b.remote_id]: hook },
          }),
          updated_at: new Date(),
        })
        .where('id', '=', b.connection_id)
        .execute();
    } catch (error) {
      problems.push(`${b.remote_id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}
