import type { SyncPreviewStatus } from '@lockstep/contract';
import { type Link, matchRecords, type RecordData, reconcile } from '@lockstep/engine';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { handleSyncRun, type SyncRunner } from '../jobs/sync-run';
import { connectionItemsSaver } from '../services/external-connections';
import { updateProgress } from '../services/progress';
import type { SecretBox } from '../services/secret-box';
import { transitionPreview } from '../services/sync-previews';
import { loadSyncPlan } from './load-sync-plan';
import { announceSyncsChanged } from './postgres-change-listener';
import type { RuntimeConnectors } from './runtime-connectors';

export type PreviewDeps = {
  db: Db;
  boss: PgBoss;
  secretBox: SecretBox;
  connectors: RuntimeConnectors;
  runner: SyncRunner;
};
export type PreviewStep = 'download' | 'plan' | 'apply';

async function statusOf(db: Db, id: string): Promise<SyncPreviewStatus | null> {
  const row = await db.selectFrom('sync_preview').select('status').where('id', '=', id).executeTakeFirst();
  return (row?.status as SyncPreviewStatus | undefined) ?? null;
}

/** Scan: download both sides of each chosen table mapping into the preview's tables, with progress. */
/** `onlyTable`: download one external table again (the others keep what was downloaded). */
async function download(deps: PreviewDeps, previewId: string, onlyTable?: string) {
  const { db } = deps;
  const preview = await db
    .selectFrom('sync_preview')
    .selectAll()
    .where('id', '=', previewId)
    .executeTakeFirstOrThrow();
  const plan = await loadSyncPlan(db, preview.core_base_id);
  const chosen = new Set(preview.core_table_ids);
  const mappings = (plan?.mappings ?? []).filter((m) => chosen.size === 0 || chosen.has(m.tableMappingId));
  let clear = db.deleteFrom('sync_preview_record').where('sync_preview_id', '=', previewId);
  if (onlyTable) clear = clear.where('external_table_id', '=', onlyTable);
  await clear.execute();
  let done = 0;
  for (const m of mappings) {
    for (const side of [m.left, m.right]) {
      if (onlyTable && side.tableId !== onlyTable) continue;
      let secrets: Record<string, string> = {};
      if (side.connectionId) {
        const c = await db
          .selectFrom('external_connection')
          .select('secrets')
          .where('id', '=', side.connectionId)
          .executeTakeFirstOrThrow();
        secrets = deps.secretBox.open<{ connectionItems: Record<string, string> }>(c.secrets).connectionItems;
      }
      const connector = deps.connectors.forConnection(
        side.type,
        secrets,
        side.connectionId ? connectionItemsSaver(deps, side.connectionId) : undefined,
      );
      if (!connector) throw new Error(`The ${side.type} connector is not available on this server.`);
      let cursor: string | null = null;
      for (;;) {
        const page = await connector.read(side.tableRemoteId, cursor, { pageSize: 500 });
        if (page.records.length) {
          await db
            .insertInto('sync_preview_record')
            .values(
              page.records.map((r) => ({
                sync_preview_id: previewId,
                external_table_id: side.tableId,
                side: side === m.left ? ('left' as const) : ('right' as const),
                remote_id: r.id,
                fields: JSON.stringify(r.fields),
              })),
            )
            .execute();
        }
        done += page.records.length;
        // A cancelled preview stops at its next page.
        if (
          preview.tracking_id &&
          !(await updateProgress(db, preview.tracking_id, {
            status: 'IN_PROGRESS',
            done,
            message: `Downloaded ${done} records`,
          }))
        ) {
          return false;
        }
        if (!page.hasMore) break;
        cursor = page.nextCursor;
      }
    }
  }
  return true;
}

/** Merge and preview: match on the table pair's fields, list problems, and plan each record without writing. */
async function planPreview(deps: PreviewDeps, previewId: string) {
  const { db } = deps;
  const preview = await db
    .selectFrom('sync_preview')
    .selectAll()
    .where('id', '=', previewId)
    .executeTakeFirstOrThrow();
  const plan = await loadSyncPlan(db, preview.core_base_id);
  const chosen = new Set(preview.core_table_ids);
  await db.deleteFrom('sync_preview_problem').where('sync_preview_id', '=', previewId).execute();
  const summary = {
    pairs: 0,
    createLeft: 0,
    createRight: 0,
    updateLeft: 0,
    updateRight: 0,
    conflicts: 0,
    unchanged: 0,
    duplicates: 0,
    missingKeys: 0,
  };
  for (const m of (plan?.mappings ?? []).filter((x) => chosen.size === 0 || chosen.has(x.tableMappingId))) {
    const rows = await db
      .selectFrom('sync_preview_record')
      .select(['id', 'side', 'remote_id', 'fields'])
      .where('sync_preview_id', '=', previewId)
      .where('external_table_id', 'in', [m.left.tableId, m.right.tableId])
      .execute();
    const left: RecordData[] = rows
      .filter((r) => r.side === 'left')
      .map((r) => ({ id: r.remote_id, fields: r.fields as RecordData['fields'] }));
    const right: RecordData[] = rows
      .filter((r) => r.side === 'right')
      .map((r) => ({ id: r.remote_id, fields: r.fields as RecordData['fields'] }));
    const existing = await db
      .selectFrom('core_meta_record')
      .select(['id', 'left_remote_id', 'right_remote_id', 'shadow', 'shadow_version'])
      .where('table_mapping_id', '=', m.tableMappingId)
      .execute();
    const links: Link[] = existing.map((l) => ({
      id: l.id,
      leftId: l.left_remote_id,
      rightId: l.right_remote_id,
      shadow: Object.keys(l.shadow).length ? (l.shadow as Link['shadow']) : null,
      version: l.shadow_version,
    }));
    const linkedLeft = new Set(links.map((l) => l.leftId));
    const linkedRight = new Set(links.map((l) => l.rightId));
    const primary = m.spec.fields.find((f) => f.id === m.matchOn.primary);
    const secondary = m.spec.fields.find((f) => f.id === m.matchOn.secondary);
    if (primary) {
      const matched = matchRecords({
        left: left.filter((r) => !linkedLeft.has(r.id)),
        right: right.filter((r) => !linkedRight.has(r.id)),
        key: { leftFieldId: primary.left.id, rightFieldId: primary.right.id, type: primary.left.type },
        ...(secondary
          ? {
              secondary: {
                leftFieldId: secondary.left.id,
                rightFieldId: secondary.right.id,
                type: secondary.left.type,
              },
            }
          : {}),
      });
      for (const p of matched.pairs)
        links.push({
          id: `preview:${p.leftId}`,
          leftId: p.leftId,
          rightId: p.rightId,
          shadow: null,
          version: 0,
        });
      summary.pairs += matched.pairs.length;
      summary.duplicates += matched.duplicates.length;
      summary.missingKeys += matched.missingKeys.length;
      const problems = [
        ...matched.duplicates.map((d) => ({
          kind: 'duplicate',
          message: `${d.recordIds.length} ${d.side} records share the key "${d.key.replace('\u0000', ' + ')}"; they are not matched.`,
          details: d,
        })),
        ...matched.missingKeys.map((k) => ({
          kind: 'missing_key',
          message: `A ${k.side} record has no value in the match field; it is created on the other side instead of matched.`,
          details: k,
        })),
      ];
      if (problems.length) {
        await db
          .insertInto('sync_preview_problem')
          .values(
            problems.map((p) => ({
              sync_preview_id: previewId,
              table_mapping_id: m.tableMappingId,
              kind: p.kind,
              message: p.message,
              details: JSON.stringify(p.details),
            })),
          )
          .execute();
      }
    }
    const result = reconcile({
      mapping: m.spec,
      links,
      left: { records: left, deletedIds: [], scanComplete: false },
      right: { records: right, deletedIds: [], scanComplete: false },
    });
    const planOf = new Map<string, string>();
    const keyOf = (side: string, id: string) => `${side}:${id}`;
    for (const op of result.operations) {
      if (op.kind === 'create') {
        const sourceSide = op.side === 'left' ? 'right' : 'left';
        planOf.set(keyOf(sourceSide, op.sourceId), `create_${op.side}`);
        if (op.side === 'left') summary.createLeft++;
        else summary.createRight++;
      } else if (op.kind === 'update') {
        planOf.set(keyOf(op.side, op.remoteId), `update_${op.side}`);
        if (op.side === 'left') summary.updateLeft++;
        else summary.updateRight++;
      }
    }
    for (const c of result.heldConflicts) {
      const link = links.find((l) => l.id === c.linkId);
      if (link?.leftId) planOf.set(keyOf('left', link.leftId), 'conflict');
      summary.conflicts++;
    }
    for (const r of rows) {
      const p = planOf.get(keyOf(r.side, r.remote_id)) ?? 'unchanged';
      if (p === 'unchanged') summary.unchanged++;
      await db.updateTable('sync_preview_record').set({ plan: p }).where('id', '=', r.id).execute();
    }
  }
  return summary;
}

/** One step of a preview, moving its status as the work finishes (the server's transitions). */
export async function runPreviewStep(
  deps: PreviewDeps,
  previewId: string,
  step: PreviewStep,
  onlyTable?: string,
) {
  const { db } = deps;
  const preview = await db
    .selectFrom('sync_preview')
    .selectAll()
    .where('id', '=', previewId)
    .executeTakeFirst();
  if (!preview) return;
  try {
    if (step === 'download') {
      if ((await statusOf(db, previewId)) !== 'downloading') return;
      const finished = await download(deps, previewId, onlyTable);
      if (!finished) return;
      await transitionPreview(db, previewId, 'downloading', 'download_finished', 'server');
      await transitionPreview(db, previewId, 'download_finished', 'planning', 'server');
      step = 'plan';
    }
    if (step === 'plan') {
      if ((await statusOf(db, previewId)) !== 'planning') return;
      const summary = await planPreview(deps, previewId);
      await transitionPreview(
        db,
        previewId,
        'planning',
        summary.duplicates > 0 ? 'planning_problem' : 'in_review',
        'server',
        summary,
      );
      if (preview.tracking_id)
        await updateProgress(db, preview.tracking_id, {
          status: 'COMPLETED',
          result: summary,
          message: 'Preview ready',
        });
      return;
    }
    if (step === 'apply') {
      if ((await statusOf(db, previewId)) !== 'applying') return;
      // Applying is the first sync itself: the runner matches, reconciles and writes, chunk by chunk.
      // The sync counts as switched on from here, so its label is Active once the runs are done.
      const applyStartedAt = new Date();
      for (let i = 0; i < 10_000; i++) {
        const result = await handleSyncRun(
          db,
          deps.boss,
          deps.runner,
          { coreBaseId: preview.core_base_id, trigger: 'preview' },
          { chain: false },
        );
        if (result === 'failed') throw new Error('The first sync failed; see Issues.');
        if (result === 'done') break;
      }
      await db
        .updateTable('core_base')
        .set({ sync_state: 'on', sync_state_changed_at: applyStartedAt })
        .where('id', '=', preview.core_base_id)
        .execute();
      await announceSyncsChanged(db).catch(() => {});
      await transitionPreview(db, previewId, 'applying', 'done', 'server');
      const tracking = (
        await db
          .selectFrom('sync_preview')
          .select('tracking_id')
          .where('id', '=', previewId)
          .executeTakeFirst()
      )?.tracking_id;
      if (tracking) await updateProgress(db, tracking, { status: 'COMPLETED', message: 'Applied' });
    }
  } catch (error) {
    const status = await statusOf(db, previewId);
    const failed =
      status === 'downloading'
        ? 'download_failed'
        : status === 'applying'
          ? 'applying_failed'
          : status === 'planning'
            ? 'planning_problem'
            : null;
    if (status && failed)
      await transitionPreview(db, previewId, status, failed, 'server', {
        error: error instanceof Error ? error.message : String(error),
      });
    if (preview.tracking_id)
      await updateProgress(db, preview.tracking_id, {
        status: 'FAILED',
        message: error instanceof Error ? error.message : String(error),
      });
  }
}
