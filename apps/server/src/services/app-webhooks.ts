import { timingSafeEqual } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
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

/** The address an app sends a connection's webhooks to: a key only this server can make. */
export function appWebhookPath(
  ctx: AppContext,
  app: 'airtable' | 'hubspot' | 'stripe',
  connectionId: string,
): string {
  return `/webhooks/${app}/${connectionId}/${ctx.secretBox.mac(`${app}-webhook:${connectionId}`)}`;
}

/**
 * Makes sure every base of the sync whose app makes webhooks by API (Airtable) has one pointing at
 * this server, with time left (Airtable's last 7 days): created when missing, refreshed when close
 * to expiry. Best effort: a refusal leaves polling to carry the changes, and is returned.
 */
export async function ensureAppWebhooks(ctx: AppContext, coreBaseId: string): Promise<string[]> {
  const bases = await ctx.db
    .selectFrom('external_base')
    .innerJoin('external_connection', 'external_connection.id', 'external_base.external_connection_id')
    .select([
      'external_base.remote_id',
      'external_connection.id as connection_id',
      'external_connection.type',
    ])
    .where('external_base.core_base_id', '=', coreBaseId)
    .where('external_base.type', '=', 'airtable')
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
    const url = `${ctx.config.publicUrl}${appWebhookPath(ctx, 'airtable', b.connection_id)}`;
    try {
      const hook = await port.ensureWebhook(
        sealed.connectionItems,
        b.remote_id,
        url,
        known,
        portContext(ctx, row),
      );
      if (JSON.stringify(hook) === JSON.stringify(known)) continue;
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
