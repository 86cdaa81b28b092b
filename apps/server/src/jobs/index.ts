import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { AppContext } from '../http/context';
import type { SecretBox } from '../services/secret-box';
import type { RuntimeConnectors } from '../sync/runtime-connectors';
import { registerApiImport } from './api-import';
import { registerDriftCheck } from './drift-check';
import { registerGenerateSchema } from './generate-schema';
import { registerGitSyncRun } from './git-sync-run';
import { registerPruneHistory } from './prune-history';
import { registerPurgeExpiredSessions } from './purge-expired-sessions';
import { limitJobRetention } from './queue';
import { registerReapStuckSyncs } from './reap-stuck-syncs';
import { registerRefreshAppWebhooks } from './refresh-app-webhooks';
import { registerReleaseIdleChangeCapture } from './release-idle-change-capture';
import { registerScheduleDriftChecks } from './schedule-drift-checks';
import { registerScheduleDueSyncs } from './schedule-due-syncs';
import { registerSyncDryRun } from './sync-dry-run';
import { registerSyncPreviewStep } from './sync-preview-step';
import { registerSyncRun, type SyncRunner } from './sync-run';
import { registerUndoRun } from './undo-run';
import { registerWebhookDelivery } from './webhook-delivery';
import type { WorkerLiveness } from './worker-liveness';

/** Every job of the product, one per file; queues and schedules are created by every role. */
export async function registerJobs(
  boss: PgBoss,
  deps: {
    db: Db;
    /** This worker process's liveness lock (worker processes only). */
    liveness?: WorkerLiveness;
    runWorkers: boolean;
    runner: SyncRunner;
    secretBox: SecretBox;
    connectors: RuntimeConnectors;
    /** Jobs that do what a route does (create-tables-async) use the routes' services. */
    ctx?: AppContext;
  },
) {
  await registerPurgeExpiredSessions(boss, deps.db, deps.runWorkers);
  await registerSyncRun(boss, deps);
  await registerSyncDryRun(
    boss,
    { ...deps, localDevPlan: deps.ctx?.config.environment === 'local' },
    deps.runWorkers,
  );
  await registerWebhookDelivery(boss, deps, deps.runWorkers);
  await registerUndoRun(
    boss,
    { ...deps, localDevPlan: deps.ctx?.config.environment === 'local' },
    deps.runWorkers,
  );
  await registerScheduleDueSyncs(boss, deps.db, deps.runWorkers);
  await registerReapStuckSyncs(boss, deps.db, deps.runWorkers);
  await registerSyncPreviewStep(boss, { ...deps, boss }, deps.runWorkers);
  await registerGenerateSchema(boss, deps.ctx ?? null, deps.runWorkers);
  await registerGitSyncRun(boss, deps.ctx ?? null, deps.runWorkers);
  await registerDriftCheck(boss, deps, deps.runWorkers);
  await registerScheduleDriftChecks(boss, deps.db, deps.runWorkers);
  await registerRefreshAppWebhooks(boss, deps.ctx ?? null, deps.runWorkers);
  await registerReleaseIdleChangeCapture(boss, deps.ctx ?? null, deps.runWorkers);
  await registerApiImport(boss, deps.ctx ?? null, deps.runWorkers);
  await registerPruneHistory(
    boss,
    deps.db,
    {
      localDevPlan: deps.ctx?.config.environment === 'local',
      retentionDays: deps.ctx?.config.historyRetentionDays,
    },
    deps.runWorkers,
  );
  // Last, so it covers every queue above (and ones made by earlier versions).
  await limitJobRetention(boss);
}
