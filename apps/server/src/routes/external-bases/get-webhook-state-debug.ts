import { IsoTimestamp, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  baseConnection,
  cursorSince,
  LISTENED_TYPES,
  readCaptureState,
  realTimeMechanism,
} from '../../services/change-capture-debug';
import { findExternalBase } from '../../services/external-bases';
import { iso } from '../../services/sync-logs';
import { RealTimeMechanism } from './get-webhooks-debug';
import { ExternalBaseParams } from './params';

export function getWebhookStateDebug(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-bases/:id/webhook-state/debug',
    {
      schema: {
        tags: ['external-bases', 'debug'],
        summary:
          "Where real time stands now (owner or staff): per table the sync's cursor against the app's latest change, changes waiting, and the listeners",
        params: ExternalBaseParams,
        response: {
          200: z.object({
            externalBaseId: Uuid,
            type: z.string(),
            mechanism: RealTimeMechanism,
            syncState: z.enum(['on', 'off']),
            listened: z.boolean(),
            changeCapture: z
              .object({
                installed: z.boolean(),
                latestChangeId: z.string().nullable(),
                listeners: z.number().int().nullable(),
                logicalSlot: z
                  .object({
                    name: z.string(),
                    walStatus: z.string().nullable(),
                    retainedBytes: z.number().nullable(),
                  })
                  .nullable(),
              })
              .nullable(),
            tables: z.array(
              z.object({
                externalTableId: Uuid,
                remoteId: z.string(),
                name: z.string(),
                fullScanComplete: z.boolean(),
                cursorMode: z.string().nullable(),
                cursorChangeId: z.string().nullable(),
                cursorUpdatedAt: IsoTimestamp.nullable(),
                latestChangeId: z.string().nullable(),
                lastChangeAt: IsoTimestamp.nullable(),
                pendingChanges: z.number().int().nullable(),
              }),
            ),
            checkedAt: IsoTimestamp,
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
        .leftJoin('sync_cursor', 'sync_cursor.external_table_id', 'external_table.id')
        .select([
          'external_table.id',
          'external_table.remote_id',
          'external_table.name',
          'sync_cursor.cursor',
          'sync_cursor.full_scan_complete',
          'sync_cursor.updated_at',
        ])
        .where('external_table.external_base_id', '=', base.id)
        .orderBy('external_table.name')
        .execute();
      const connection = await baseConnection(ctx, base.external_connection_id);
      const mechanism = realTimeMechanism(base.type, connection);
      const cursors = new Map(tables.map((t) => [t.remote_id, cursorSince(t.cursor)]));
      let state: Awaited<ReturnType<typeof readCaptureState>> | null = null;
      let error: string | null = null;
      if (mechanism !== 'polling' && connection) {
        const since = new Map<string, { since: string; xid?: string }>();
        for (const [remoteId, c] of cursors)
          if (c && /^\d+$/.test(c.since) && (c.xid === undefined || /^\d+$/.test(c.xid)))
            since.set(remoteId, { since: c.since, xid: c.xid });
        try {
          state = await readCaptureState(
            connection,
            tables.map((t) => t.remote_id),
            since,
          );
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
      }
      return {
        externalBaseId: base.id,
        type: base.type,
        mechanism,
        syncState: core.sync_state,
        listened: LISTENED_TYPES.has(base.type) && core.sync_state === 'on',
        changeCapture: state
          ? {
              installed: state.installed,
              latestChangeId: state.latestChangeId,
              listeners: state.listeners,
              logicalSlot: state.logicalSlot,
            }
          : null,
        tables: tables.map((t) => {
          const s = state?.tables.get(t.remote_id);
          const c = cursors.get(t.remote_id);
          return {
            externalTableId: t.id,
            remoteId: t.remote_id,
            name: t.name,
            fullScanComplete: t.full_scan_complete ?? false,
            cursorMode: c?.mode ?? null,
            cursorChangeId: c?.since ?? null,
            cursorUpdatedAt: t.updated_at ? iso(t.updated_at) : null,
            latestChangeId: s?.latestChangeId ?? null,
            lastChangeAt: s?.lastChangeAt ?? null,
            pendingChanges: s?.pendingChanges ?? null,
          };
        }),
        checkedAt: new Date().toISOString(),
        error,
      };
    },
  );
}
