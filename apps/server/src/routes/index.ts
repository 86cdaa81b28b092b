import type { AppContext, RestApp } from '../http/context';
import { apiImportAutomap } from './api-import/automap';
import { deleteApiImport } from './api-import/delete-api-import';
import { fetchApi } from './api-import/fetch';
import { generateFetch } from './api-import/generate-fetch';
import { getApiImport } from './api-import/get-api-import';
import { importApi } from './api-import/import';
import { listApiImports } from './api-import/list-api-imports';
import { patchApiImport } from './api-import/patch-api-import';
import { runApiImportNow } from './api-import/run-api-import';
import { apiImportTargetTables } from './api-import/target-tables';
import { automapFieldsRoute } from './automap/automap-fields';
import { automapTablesRoute } from './automap/automap-tables';
import { createBlendedTable } from './blended-tables/create-blended-table';
import { deleteBlendedTable } from './blended-tables/delete-blended-table';
import { generateBlendedConfig } from './blended-tables/generate-config';
import { listBlendedTables } from './blended-tables/list-blended-tables';
import { previewBlendedTable } from './blended-tables/preview-blended-table';
import { createExternalConnection } from './connections/create-external-connection';
import { deleteExternalConnection } from './connections/delete-external-connection';
import { expectNotionHandshake } from './connections/expect-notion-handshake';
import { fetchBasePreviews } from './connections/fetch-base-previews';
import { getConnectorInfo } from './connections/get-connector-info';
import { getExternalConnection } from './connections/get-external-connection';
import { getUserEmail } from './connections/get-user-email';
import { listExternalConnections } from './connections/list-external-connections';
import { oauthAuthorizeCallback } from './connections/oauth-authorize-callback';
import { oauthAuthorizeUrl } from './connections/oauth-authorize-url';
import { patchExternalConnection } from './connections/patch-external-connection';
import { webflowPublishSiteRoute } from './connector/webflow-publish-site';
import { applyDryRun } from './core-bases/apply-dry-run';
import { createCoreBase } from './core-bases/create-core-base';
import { deleteCoreBase } from './core-bases/delete-core-base';
import { discardDryRun } from './core-bases/discard-dry-run';
import { getActivity } from './core-bases/get-activity';
import { getCoreBase } from './core-bases/get-core-base';
import { getDriftReport } from './core-bases/get-drift-report';
import { getDryRun } from './core-bases/get-dry-run';
import { getSyncDisabledRecords } from './core-bases/get-sync-disabled-records';
import { getSyncStatus } from './core-bases/get-sync-status';
import { getSyncStatusBatch } from './core-bases/get-sync-status-batch';
import { listCoreBases } from './core-bases/list-core-bases';
import { patchCoreBase } from './core-bases/patch-core-base';
import { pauseAllSyncs } from './core-bases/pause-all-syncs';
import { resumeAllSyncs } from './core-bases/resume-all-syncs';
import { startDriftCheck } from './core-bases/start-drift-check';
import { startDryRun } from './core-bases/start-dry-run';
import { syncNow } from './core-bases/sync-now';
import { findRecordDebug } from './core-meta-records/find-record-debug';
import { getRecordHistory } from './core-meta-records/get-record-history';
import { getRecordStatus } from './core-meta-records/get-record-status';
import { searchRecords } from './core-meta-records/search-records';
import { deleteAllBases } from './debug/delete-all-bases';
import { forceError } from './debug/force-error';
import { listJobs } from './debug/list-jobs';
import { listQueues } from './debug/list-queues';
import { listStuckSyncs } from './debug/list-stuck-syncs';
import { restartStuckSync } from './debug/restart-stuck-sync';
import { demoDatabases } from './demo/demo-databases';
import { createApiTokenRoute } from './developer/create-api-token';
import { createWebhook } from './developer/create-webhook';
import { deleteWebhook } from './developer/delete-webhook';
import { listApiTokens } from './developer/list-api-tokens';
import { listWebhookDeliveries } from './developer/list-webhook-deliveries';
import { listWebhooks } from './developer/list-webhooks';
import { patchWebhook } from './developer/patch-webhook';
import { revokeApiToken } from './developer/revoke-api-token';
import { testWebhook } from './developer/test-webhook';
import { bumpRecurringJobPriority } from './external-bases/bump-recurring-job-priority';
import { createExternalBase } from './external-bases/create-external-base';
import { deleteExternalBase } from './external-bases/delete-external-base';
import { getExternalBase } from './external-bases/get-external-base';
import { getWebhookStateDebug } from './external-bases/get-webhook-state-debug';
import { getWebhooksDebug } from './external-bases/get-webhooks-debug';
import { listExternalBases } from './external-bases/list-external-bases';
import { patchExternalBase } from './external-bases/patch-external-base';
import { updateBasePreview } from './external-bases/update-base-preview';
import { updateTablePreviews } from './external-bases/update-table-previews';
import { updateTableSchema } from './external-tables/update-table-schema';
import { createFieldsRoute } from './generate-schema/create-fields';
import { createTablesRoute } from './generate-schema/create-tables';
import { createTablesAsyncRoute } from './generate-schema/create-tables-async';
import { setupTableRoute } from './generate-schema/setup-table';
import { setupTablesRoute } from './generate-schema/setup-tables';
import { cancelGitSyncRun } from './git-sync/cancel-git-sync-run';
import { createGitSync } from './git-sync/create-git-sync';
import { deleteGitSync } from './git-sync/delete-git-sync';
import { fetchTablePreviews } from './git-sync/fetch-table-previews';
import { getGitSync } from './git-sync/get-git-sync';
import { listGitSyncRuns } from './git-sync/list-git-sync-runs';
import { listGitSyncs } from './git-sync/list-git-syncs';
import { patchGitSync } from './git-sync/patch-git-sync';
import { runDownload } from './git-sync/run-download';
import { runFetchSchema } from './git-sync/run-fetch-schema';
import { runUpload } from './git-sync/run-upload';
import { cancelProgress } from './progress/cancel-progress';
import { getProgress } from './progress/get-progress';
import { deleteApprovals } from './review/delete-approvals';
import { heldConflicts } from './review/held-conflicts';
import { sandboxApps } from './sandbox/sandbox-apps';
import { clearAndRetry } from './sync-errors/clear-and-retry';
import { getSyncError } from './sync-errors/get-sync-error';
import { listPreviewSyncErrors } from './sync-errors/list-preview-sync-errors';
import { listSyncErrorCauses } from './sync-errors/list-sync-error-causes';
import { listSyncErrors } from './sync-errors/list-sync-errors';
import { suggestFix } from './sync-errors/suggest-fix';
import { createSyncLogExport } from './sync-log-exports/create-sync-log-export';
import { deleteSyncLogExport } from './sync-log-exports/delete-sync-log-export';
import { downloadSyncLogExport } from './sync-log-exports/download-sync-log-export';
import { listSyncLogExports } from './sync-log-exports/list-sync-log-exports';
import { getSyncLog } from './sync-logs/get-sync-log';
import { listSyncLogs } from './sync-logs/list-sync-logs';
import { undoSyncLog } from './sync-logs/undo-sync-log';
import { cloneSyncPreview } from './sync-preview/clone-sync-preview';
import { createInternalSyncPreview } from './sync-preview/create-internal-sync-preview';
import { createSyncPreview } from './sync-preview/create-sync-preview';
import { getApplyProgress } from './sync-preview/get-apply-progress';
import { getPreviewDebug } from './sync-preview/get-preview-debug';
import { getSyncPreview } from './sync-preview/get-sync-preview';
import { listCoreBasePreviews } from './sync-preview/list-core-base-previews';
import { listPreviewDuplicates } from './sync-preview/list-preview-duplicates';
import { listPreviewProblems } from './sync-preview/list-preview-problems';
import { listPreviewRecords } from './sync-preview/list-preview-records';
import { patchSyncPreview } from './sync-preview/patch-sync-preview';
import { patchTablePair } from './sync-preview/patch-table-pair';
import { redownloadExternalTable } from './sync-preview/redownload-external-table';
import { claimTemporaryConnection } from './temporary-connections/claim-temporary-connection';
import { createTemporaryConnection } from './temporary-connections/create-temporary-connection';
import { getTrace } from './trace-logs/get-trace';
import { listTraceLogs } from './trace-logs/list-trace-logs';
import { assignPlan } from './users/assign-plan';
import { choosePlan } from './users/choose-plan';
import { deleteUser } from './users/delete-user';
import { getCurrentUser } from './users/get-current-user';
import { getKnownFlags } from './users/get-known-flags';
import { getLimitData } from './users/get-limit-data';
import { getUser } from './users/get-user';
import { listPlans } from './users/list-plans';
import { putUserFlags } from './users/put-user-flags';
import { searchUsers } from './users/search-users';
import { searchUsersByTerm } from './users/search-users-by-term';

/** Every /rest route, one per file. */
export function registerRestRoutes(app: RestApp, ctx: AppContext) {
  for (const register of [
    getCurrentUser,
    getLimitData,
    listPlans,
    choosePlan,
    searchUsers,
    getUser,
    deleteUser,
    assignPlan,
    putUserFlags,
    getKnownFlags,
    forceError,
    createCoreBase,
    listCoreBases,
    getSyncStatusBatch,
    getCoreBase,
    patchCoreBase,
    deleteCoreBase,
    getSyncStatus,
    getSyncDisabledRecords,
    getDriftReport,
    getActivity,
    syncNow,
    startDriftCheck,
    startDryRun,
    getDryRun,
    applyDryRun,
    discardDryRun,
    pauseAllSyncs,
    resumeAllSyncs,
    deleteApprovals,
    heldConflicts,
    createSyncPreview,
    createInternalSyncPreview,
    getPreviewDebug,
    listCoreBasePreviews,
    getSyncPreview,
    getApplyProgress,
    patchSyncPreview,
    listPreviewProblems,
    listPreviewRecords,
    listPreviewDuplicates,
    patchTablePair,
    redownloadExternalTable,
    cloneSyncPreview,
    bumpRecurringJobPriority,
    webflowPublishSiteRoute,
    demoDatabases,
    getConnectorInfo,
    createExternalConnection,
    listExternalConnections,
    getExternalConnection,
    patchExternalConnection,
    expectNotionHandshake,
    deleteExternalConnection,
    fetchBasePreviews,
    createExternalBase,
    listExternalBases,
    getExternalBase,
    patchExternalBase,
    updateTablePreviews,
    getProgress,
    cancelProgress,
    listSyncLogs,
    getSyncLog,
    undoSyncLog,
    listSyncErrorCauses,
    listSyncErrors,
    listPreviewSyncErrors,
    getSyncError,
    suggestFix,
    clearAndRetry,
    listStuckSyncs,
    restartStuckSync,
    listQueues,
    listJobs,
    deleteAllBases,
    searchUsersByTerm,
    getRecordHistory,
    getRecordStatus,
    searchRecords,
    findRecordDebug,
    createSyncLogExport,
    listSyncLogExports,
    downloadSyncLogExport,
    deleteSyncLogExport,
    listTraceLogs,
    getTrace,
    automapTablesRoute,
    automapFieldsRoute,
    createTablesRoute,
    createTablesAsyncRoute,
    createFieldsRoute,
    setupTablesRoute,
    setupTableRoute,
    oauthAuthorizeCallback,
    oauthAuthorizeUrl,
    getUserEmail,
    createTemporaryConnection,
    claimTemporaryConnection,
    updateBasePreview,
    getWebhooksDebug,
    getWebhookStateDebug,
    deleteExternalBase,
    updateTableSchema,
    sandboxApps,
    createGitSync,
    listGitSyncs,
    getGitSync,
    patchGitSync,
    deleteGitSync,
    listGitSyncRuns,
    runUpload,
    runDownload,
    runFetchSchema,
    cancelGitSyncRun,
    fetchTablePreviews,
    generateFetch,
    fetchApi,
    importApi,
    apiImportTargetTables,
    apiImportAutomap,
    listApiImports,
    getApiImport,
    patchApiImport,
    deleteApiImport,
    runApiImportNow,
    createApiTokenRoute,
    listApiTokens,
    revokeApiToken,
    createWebhook,
    listWebhooks,
    patchWebhook,
    deleteWebhook,
    listWebhookDeliveries,
    testWebhook,
    generateBlendedConfig,
    previewBlendedTable,
    createBlendedTable,
    listBlendedTables,
    deleteBlendedTable,
  ]) {
    register(app, ctx);
  }
}
