import { timingSafeEqual } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
import type { AppWebhook } from '../connectors/connector-port';
import type { AppContext } from '../http/context';
import { openSecrets, portContext } from './external-connections';

/** What a connection keeps about the webhooks its apps made (sealed with its secrets): per base. */
export type SealedWebhooks = { appWebhooks?: Record<string, AppWebhook> };

/** Compares a webhook address (or key) in constant time. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The address an app sends a connection's webhooks to: a key only this server can make. */
export function appWebhookPath(ctx: AppContext, app: 'airtable', connectionId: string): string {
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
