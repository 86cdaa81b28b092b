import type { WebhookEventType } from '@lockstep/contract';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { SecretBox } from '../services/secret-box';
import { deliverAndLog, newEvent, type WebhookEvent } from '../services/webhooks-out';

export const WEBHOOK_DELIVERY = 'webhook-delivery';
export type WebhookDeliveryData = { subscriptionId: string; event: WebhookEvent };

/** Attempts after the first: five in all. */
export const WEBHOOK_RETRY_LIMIT = 4;
/** Base of the exponential backoff, in seconds (`LOCKSTEP_WEBHOOK_RETRY_DELAY_SECONDS`, 30 by default). */
const retryDelaySeconds = () =>
  Math.max(1, Number(process.env.LOCKSTEP_WEBHOOK_RETRY_DELAY_SECONDS ?? 30) || 30);
/** Operations per `record.changed` event; a run with more sends several. */
const CHANGES_PER_EVENT = 500;

/**
 * Webhooks out: each delivery is a job of its own, so a receiver that fails is retried by pg-boss
 * with exponential backoff (5 attempts), and every attempt lands in the subscription's log.
 */
export async function registerWebhookDelivery(
  boss: PgBoss,
  deps: { db: Db; secretBox: SecretBox },
  runWorkers: boolean,
) {
  const delay = retryDelaySeconds();
  await boss.createQueue(WEBHOOK_DELIVERY, {
    retryLimit: WEBHOOK_RETRY_LIMIT,
    retryDelay: delay,
    retryBackoff: true,
    retryDelayMax: Math.max(delay, 3600),
    // A delivery waits 10 s at most; the margin covers the log write.
    expireInSeconds: 60,
  });
  await boss.updateQueue(WEBHOOK_DELIVERY, {
    retryLimit: WEBHOOK_RETRY_LIMIT,
    retryDelay: delay,
    retryBackoff: true,
    retryDelayMax: Math.max(delay, 3600),
  });
  if (!runWorkers) return;
  await boss.work<WebhookDeliveryData>(
    WEBHOOK_DELIVERY,
    { batchSize: 1, pollingIntervalSeconds: 1, localConcurrency: 2 },
    async (jobs) => {
      for (const job of jobs) {
        const subscription = await deps.db
          .selectFrom('webhook_subscription')
          .selectAll()
          .where('id', '=', job.data.subscriptionId)
          .executeTakeFirst();
        // Deleted or paused meanwhile: nothing to deliver (a paused subscription drops its events).
        if (!subscription || subscription.paused) continue;
        const result = await deliverAndLog(
          deps.db,
          deps.secretBox,
          subscription,
          job.data.event,
          job.retryCount + 1,
        );
        // Thrown: pg-boss retries with backoff until the attempts run out.
        if (!result.ok) throw new Error(result.error ?? `delivery failed (${result.statusCode})`);
      }
    },
  );
}

/**
 * The events of one finished run, queued for every live subscription of the sync's owner that asked
 * for them: `sync.run.finished`, the issues opened and resolved since the previous run ended, and its
 * operations as `record.changed` batches. Called once per run, from handleSyncRun (jobs/sync-run.ts),
 * after the run's log is closed; it only reads what the run wrote.
 */
export async function emitRunEvents(db: Db, boss: PgBoss, syncLogId: string): Promise<number> {
  const log = await db.selectFrom('sync_log').selectAll().where('id', '=', syncLogId).executeTakeFirst();
  if (!log) return 0;
  const subscriptions = await db
    .selectFrom('webhook_subscription')
    .select(['id', 'events'])
    .where('owner_id', '=', log.owner_id)
    .where('paused', '=', false)
    .execute();
  if (subscriptions.length === 0) return 0;
  const wanted = new Set(subscriptions.flatMap((s) => s.events));
  const startedAt = new Date(log.started_at);
  const events: WebhookEvent[] = [];

  if (wanted.has('sync.run.finished'))
    events.push(
      newEvent('sync.run.finished', {
        coreBaseId: log.core_base_id,
        syncLogId: log.id,
        status: log.status,
        trigger: log.trigger,
        counts: log.counts,
        error: log.error,
        startedAt: startedAt.toISOString(),
        finishedAt: log.finished_at ? new Date(log.finished_at).toISOString() : null,
      }),
    );

  if (wanted.has('issue.opened') || wanted.has('issue.resolved')) {
    // Since the sync's previous run ended, so an issue opened or resolved between runs (a retry, the
    // user's own action) goes out with this run rather than never.
    const previous = await db
      .selectFrom('sync_log')
      .select('finished_at')
      .where('core_base_id', '=', log.core_base_id)
      .where('id', '!=', log.id)
      .where('finished_at', 'is not', null)
      .where('started_at', '<=', startedAt)
      .orderBy('finished_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const since = previous?.finished_at ? new Date(previous.finished_at) : startedAt;
    const issues = await db
      .selectFrom('sync_error')
      .select([
        'id',
        'code',
        'user_facing_message',
        'side',
        'remote_id',
        'status',
        'created_at',
        'updated_at',
      ])
      .where('core_base_id', '=', log.core_base_id)
      .where('updated_at', '>=', since)
      .execute();
    for (const issue of issues) {
      const data = {
        coreBaseId: log.core_base_id,
        syncLogId: log.id,
        issueId: issue.id,
        code: issue.code,
        message: issue.user_facing_message,
        side: issue.side,
        remoteId: issue.remote_id,
      };
      if (issue.status === 'resolved') {
        if (wanted.has('issue.resolved')) events.push(newEvent('issue.resolved', data));
      } else if (new Date(issue.created_at) >= since && wanted.has('issue.opened'))
        events.push(newEvent('issue.opened', data));
    }
  }

  if (wanted.has('record.changed')) {
    const entries = await db
      .selectFrom('sync_log_entry as e')
      .leftJoin('core_meta_record as m', 'm.id', 'e.core_meta_record_id')
      .leftJoin('table_mapping as tm', 'tm.id', 'm.table_mapping_id')
      .select([
        'e.id',
        'e.side',
        'e.operation',
        'e.remote_id',
        'e.record_count',
        'e.records',
        'e.core_meta_record_id',
        'tm.id as table_mapping_id',
        'tm.left_table_id',
        'tm.right_table_id',
      ])
      .where('e.sync_log_id', '=', log.id)
      .orderBy('e.created_at')
      .execute();
    const changes = entries.map((e) => ({
      tablePair: e.table_mapping_id
        ? { id: e.table_mapping_id, leftTableId: e.left_table_id, rightTableId: e.right_table_id }
        : null,
      side: e.side,
      kind: e.operation,
      recordId: e.remote_id,
      linkId: e.core_meta_record_id,
      recordCount: e.record_count,
      ...(e.records ? { recordIds: e.records.remote } : {}),
    }));
    for (let i = 0; i < changes.length; i += CHANGES_PER_EVENT)
      events.push(
        newEvent('record.changed', {
          coreBaseId: log.core_base_id,
          syncLogId: log.id,
          changes: changes.slice(i, i + CHANGES_PER_EVENT),
        }),
      );
  }

  let queued = 0;
  for (const subscription of subscriptions)
    for (const event of events)
      if (subscription.events.includes(event.type as WebhookEventType)) {
        await boss.send(WEBHOOK_DELIVERY, {
          subscriptionId: subscription.id,
          event,
        } satisfies WebhookDeliveryData);
        queued++;
      }
  return queued;
}
