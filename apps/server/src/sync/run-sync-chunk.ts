import { ConnectorError, isRetryable } from '@lockstep/connectors';
import type { SyncRunner } from '../jobs/sync-run';
import { loadSyncPlan } from './load-sync-plan';
import { orderByLinks, relationTargets } from './relations';
import { addCounts } from './run/bookkeeping';
import { pauseForBrokenConnection } from './run/issues';
import type { Counts, Deps } from './run/run-context';
import { runMapping } from './run/run-mapping';
import { writeWaitingRelations } from './run/waiting-relations';
import { RunStop } from './side-connector';
import { failedSideOf, raiseTableIssue, resolveTableIssues } from './table-problems';

/**
 * The engine-backed runner: one chunk of a sync runs each table pair's stages (run/run-mapping.ts),
 * linked tables first, then the relations that waited for a record another pair synced. A pair's
 * own problem (a table gone) is its issue and the others go on; refused credentials stop the run
 * and pause the sync; transient failures throw, and the queue retries the chunk.
 */
export function createSyncRunner(deps: Deps): SyncRunner {
  return {
    async runChunk({ coreBaseId, syncLogId }) {
      const plan = await loadSyncPlan(deps.db, coreBaseId);
      if (!plan) return { result: 'done' };
      const counts: Counts = {};
      let more = false;
      // A side whose committed changes wait behind a running transaction: read again shortly.
      const waiting = { any: false };
      // Linked tables first, so most relations find their partner in the same run.
      const targets = relationTargets(plan.mappings);
      const problems: string[] = [];
      try {
        for (const m of orderByLinks(plan.mappings)) {
          try {
            more =
              (await runMapping(deps, plan.ownerId, coreBaseId, syncLogId, m, counts, targets, waiting)) ||
              more;
            await resolveTableIssues(deps.db, coreBaseId, m.tableMappingId);
          } catch (error) {
            // A problem of this table pair (a table or column gone, a grant revoked): one issue, and
            // the other pairs go on. Refused credentials and transient failures stop the run below.
            if (
              !(error instanceof ConnectorError) ||
              isRetryable(error.code) ||
              error.code === 'auth_invalid'
            )
              throw error;
            problems.push(await raiseTableIssue(deps.db, plan.ownerId, coreBaseId, m, error));
          }
        }
        // Relations that waited for a record another mapping (or a later page) has now synced.
        for (const m of plan.mappings) {
          await writeWaitingRelations(
            deps,
            { ownerId: plan.ownerId, coreBaseId, syncLogId, m, counts },
            targets,
          );
        }
      } catch (error) {
        if (error instanceof RunStop) return { result: 'failed', error: error.message };
        if (error instanceof ConnectorError && !isRetryable(error.code)) {
          if (error.code === 'auth_invalid') {
            const where = failedSideOf(error);
            await pauseForBrokenConnection(deps.db, coreBaseId, error.userFacingMessage, where);
          }
          return { result: 'failed', error: error.userFacingMessage };
        }
        throw error; // transient: pg-boss retries the chunk with backoff
      } finally {
        await addCounts(deps.db, syncLogId, counts);
      }
      if (more) return { result: 'more_work' };
      const recheckSoon = waiting.any || undefined;
      return problems.length
        ? { result: 'failed', error: problems.join(' '), recheckSoon }
        : { result: 'done', recheckSoon };
    },
  };
}
