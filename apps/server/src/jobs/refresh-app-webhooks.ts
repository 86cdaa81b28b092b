import type { PgBoss } from 'pg-boss';
import type { AppContext } from '../http/context';
import { apiWebhookTypes, ensureAppWebhooks } from '../services/app-webhooks';

export const REFRESH_APP_WEBHOOKS = 'refresh-app-webhooks';
type Data = { coreBaseId?: string };

/** Asks for the webhooks of one sync now (it was switched on), or of every sync that is on. */
export async function requestAppWebhooks(boss: PgBoss, coreBaseId: string) {
  await boss.send(REFRESH_APP_WEBHOOKS, { coreBaseId } satisfies Data);
}

/**
 * Webhooks apps make by API (Airtable's live 7 days; Attio's and Pipedrive's until deleted): made
 * when a sync is switched on, and every 6 hours each one is checked: refreshed when it has less than
 * two days left (Airtable), made again when the app lost it or it was deleted there.
 * Polling carries the changes whenever a webhook is missing, so a failure here only costs speed.
 */
export async function registerRefreshAppWebhooks(boss: PgBoss, ctx: AppContext | null, runWorkers: boolean) {
  await boss.createQueue(REFRESH_APP_WEBHOOKS, { retryLimit: 2, retryDelay: 60 });
  await boss.schedule(REFRESH_APP_WEBHOOKS, '17 */6 * * *', {});
  if (!runWorkers || !ctx) return;
  await boss.work<Data>(REFRESH_APP_WEBHOOKS, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs) {
      const types = apiWebhookTypes(ctx);
      const ids = job.data?.coreBaseId
        ? [job.data.coreBaseId]
        : types.length === 0
          ? []
          : (
              await ctx.db
                .selectFrom('core_base')
                .innerJoin('external_base', 'external_base.core_base_id', 'core_base.id')
                .select('core_base.id')
                .distinct()
                .where('core_base.sync_state', '=', 'on')
                .where('external_base.type', 'in', types)
                .execute()
            ).map((r) => r.id);
      for (const id of ids) {
        const problems = await ensureAppWebhooks(ctx, id);
        if (problems.length) console.error(`webhooks of sync ${id}: ${problems.join('; ')}`);
      }
    }
  });
}
