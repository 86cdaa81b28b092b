import { CoreBase, PatchCoreBaseBody } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { requestAppWebhooks } from '../../jobs/refresh-app-webhooks';
import { requestDryRun } from '../../jobs/sync-dry-run';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { clearPlan } from '../../services/dry-runs';
import { assertPlanAllows } from '../../services/plan-guard';
import { replaceTableMappings } from '../../services/table-mappings';
import { announceSyncsChanged } from '../../sync/postgres-change-listener';
import { CoreBaseIdParams, DetailQuery } from './params';

export function patchCoreBase(app: RestApp, ctx: AppContext) {
  app.patch(
    '/core-bases/:id',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Change a sync: name, pinned, on/off, dry-run mode, config extras, table and field mappings',
        params: CoreBaseIdParams,
        querystring: DetailQuery.extend({
          // The local dev flag "allow mapping unsupported fields": honoured on a local server only.
          allowUnsupported: z
            .enum(['true', 'false'])
            .default('false')
            .transform((v) => v === 'true'),
        }),
        body: PatchCoreBaseBody,
        response: { 200: CoreBase },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await findCoreBase(ctx.db, principal, request.params.id);
      const { syncState, name, pinned, dryRun, configExtras, mappings } = request.body;
      // Switching on counts as activating: an expired plan or a full record limit refuses it.
      if (syncState === 'on' && row.sync_state === 'off')
        await assertPlanAllows(ctx.db, row.owner_id, 'activate', ctx.config.environment === 'local');
      if (mappings) {
        const allowUnsupported = request.query.allowUnsupported && ctx.config.environment === 'local';
        await replaceTableMappings(ctx.db, row, mappings.tableMappings, allowUnsupported);
      }
      const updated = await ctx.db
        .updateTable('core_base')
        .set({
          ...(name === undefined ? {} : { name }),
          ...(pinned === undefined ? {} : { pinned }),
          ...(dryRun === undefined ? {} : { dry_run: dryRun }),
          ...(configExtras === undefined ? {} : { config_extras: JSON.stringify(configExtras) }),
          ...(syncState === undefined || syncState === row.sync_state
            ? {}
            : // Switched by hand: "resume all" no longer owns this sync's state.
              { sync_state: syncState, sync_state_changed_at: new Date(), paused_all_at: null }),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      // Dry-run mode switched on: a pass at once shows what waits. Switched off without applying: the
      // plan is cleared and a real run writes what waits (as applying it would).
      if (dryRun === true && !row.dry_run) await requestDryRun(ctx.db, ctx.boss, row.id, 'dry_run_mode');
      if (dryRun === false && row.dry_run) {
        // With the sync off nothing is written yet: the plan is discarded, not applied.
        await clearPlan(ctx.db, row.id, updated.sync_state === 'on' ? 'applied' : 'discarded');
        if (updated.sync_state === 'on') await requestSyncRun(ctx.boss, row.id, 'dry_run_off', PRIORITY.user);
      }
      // Switching on starts a run at once instead of waiting for the schedule.
      if (syncState === 'on' && row.sync_state === 'off') {
        await requestSyncRun(ctx.boss, row.id, 'activated', PRIORITY.user);
        await announceSyncsChanged(ctx.db).catch(() => {});
        // Apps whose webhooks are made by API (Airtable, Attio, Pipedrive) get theirs in the background.
        await requestAppWebhooks(ctx.boss, row.id);
      } else if (mappings && updated.sync_state === 'on') {
        // New or changed mappings on a live sync: carry them now (a new table pair starts with a
        // full read), and listen on any table that is new to the listeners.
        await requestSyncRun(ctx.boss, row.id, 'mappings_changed', PRIORITY.user);
        await announceSyncsChanged(ctx.db).catch(() => {});
      }
      return toCoreBase(
        ctx.db,
        updated,
        request.query.detailLevel,
        request.query.fullDebug && principal.staff,
      );
    },
  );
}
