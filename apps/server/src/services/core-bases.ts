import {
  type ConnectorType,
  type CoreBase,
  connectorDisplayName,
  type SyncLabel,
  type SyncStatus,
} from '@lockstep/contract';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../db/database';
import type { CoreBaseTable, ExternalBaseTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { notFound } from '../http/http-error';

export type CoreBaseRow = Selectable<CoreBaseTable>;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** A core base the principal may see; someone else's is indistinguishable from a missing one (404). */
export async function findCoreBase(db: Db, principal: Principal, id: string): Promise<CoreBaseRow> {
  const row = await db.selectFrom('core_base').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Sync');
  return row;
}

async function externalBasesOf(db: Db, coreBaseId: string, withSchema: boolean) {
  const bases = await db
    .selectFrom('external_base')
    .selectAll()
    .where('core_base_id', '=', coreBaseId)
    .execute();
  const tables =
    withSchema && bases.length > 0
      ? await db
          .selectFrom('external_table')
          .selectAll()
          .where(
            'external_base_id',
            'in',
            bases.map((b) => b.id),
          )
          .orderBy('name')
          .execute()
      : [];
  const columns =
    tables.length > 0
      ? await db
          .selectFrom('external_column')
          .selectAll()
          .where(
            'external_table_id',
            'in',
            tables.map((t) => t.id),
          )
          .orderBy('name')
          .execute()
      : [];
  const toBase = (b: Selectable<ExternalBaseTable>) => ({
    id: b.id,
    type: b.type,
    name: b.name,
    remoteId: b.remote_id,
    coreBaseId: b.core_base_id,
    externalConnectionId: b.external_connection_id,
    side: b.side,
    extras: b.extras,
    webhooksEnabled: b.webhooks_enabled,
    connectorInfo: { connectorType: b.type },
    externalTables: tables
      .filter((t) => t.external_base_id === b.id)
      .map((t) => ({
        id: t.id,
        remoteId: t.remote_id,
        name: t.name,
        externalColumns: columns
          .filter((c) => c.external_table_id === t.id)
          .map((c) => ({
            id: c.id,
            remoteId: c.remote_id,
            name: c.name,
            fieldType: c.field_type,
            readOnly: c.read_only,
            options: c.options,
          })),
      })),
  });
  return {
    left: bases.find((b) => b.side === 'left'),
    right: bases.find((b) => b.side === 'right'),
    toBase,
  };
}

async function tableMappingsOf(db: Db, coreBaseId: string) {
  const mappings = await db
    .selectFrom('table_mapping')
    .selectAll()
    .where('core_base_id', '=', coreBaseId)
    .orderBy('created_at')
    .execute();
  const columns =
    mappings.length > 0
      ? await db
          .selectFrom('column_mapping')
          .selectAll()
          .where(
            'table_mapping_id',
            'in',
            mappings.map((m) => m.id),
          )
          .execute()
      : [];
  return mappings.map((m) => ({
    id: m.id,
    leftTableId: m.left_table_id,
    rightTableId: m.right_table_id,
    syncDirection: m.sync_direction,
    filter: m.filter ?? null,
    createdAt: iso(m.created_at) as string,
    updatedAt: iso(m.updated_at) as string,
    matchOnFieldId: m.match_on_field_id,
    matchOnSecondaryFieldId: m.match_on_secondary_field_id,
    conflictWinnerSide: m.conflict_winner_side,
    conflictReview: m.conflict_review,
    deleteProtection: m.delete_protection,
    columnMappings: columns
      .filter((c) => c.table_mapping_id === m.id)
      .map((c) => ({
        id: c.id,
        leftColumnId: c.left_column_id,
        rightColumnId: c.right_column_id,
        syncDirection: c.sync_direction,
        ownerSide: c.owner_side,
        optionPairs: c.option_pairs ?? null,
      })),
  }));
}

/** The core base as the API shows it; fullBaseSchema adds each side's tables and columns. */
export async function toCoreBase(
  db: Db,
  row: CoreBaseRow,
  detailLevel: 'basic' | 'fullBaseSchema',
  fullDebug = false,
): Promise<CoreBase> {
  const [bases, tableMappings] = await Promise.all([
    externalBasesOf(db, row.id, detailLevel === 'fullBaseSchema'),
    tableMappingsOf(db, row.id),
  ]);
  const base: CoreBase = {
    id: row.id,
    name: row.name,
    setupOrigin: row.setup_origin,
    pinned: row.pinned,
    syncState: row.sync_state,
    dryRun: row.dry_run,
    mappings: { tableMappings },
    configExtras: row.config_extras,
    lastSyncTime: iso(row.last_sync_time),
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
    leftExternalBase: bases.left ? bases.toBase(bases.left) : null,
    rightExternalBase: bases.right ? bases.toBase(bases.right) : null,
  };
  if (fullDebug) {
    const [records, runs] = await Promise.all([
      db
        .selectFrom('core_meta_record')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('core_base_id', '=', row.id)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom('sync_log')
        .select(['id', 'status', 'trigger', 'started_at', 'finished_at'])
        .where('core_base_id', '=', row.id)
        .orderBy('started_at', 'desc')
        .limit(5)
        .execute(),
    ]);
    base.debug = { ownerId: row.owner_id, linkedRecords: Number(records.n), recentRuns: runs };
  }
  return base;
}

/**
 * Spec section 4's labels, derived from the data (never stored): off is Disabled; on with no run
 * since it was switched on is Starting up; a run in progress is Initial sync until one run has
 * completed, then Syncing changes; otherwise Active.
 */
export function labelOf(input: {
  syncState: 'on' | 'off';
  running: boolean;
  everCompleted: boolean;
  lastRunStartedAt: Date | null;
  switchedOnAt: Date | null;
}): SyncLabel {
  if (input.syncState === 'off') return 'Disabled';
  if (input.running) return input.everCompleted ? 'Syncing changes' : 'Initial sync';
  const ranSinceSwitchOn =
    input.lastRunStartedAt !== null &&
    (input.switchedOnAt === null || input.lastRunStartedAt.getTime() >= input.switchedOnAt.getTime());
  if (!ranSinceSwitchOn) return 'Starting up';
  return input.everCompleted ? 'Active' : 'Initial sync';
}

/** The app named by a sync's open outage issue, null when none is open ('an app' for an unknown side). */
function unreachableApp(outages: { type: string | null }[]): string | null {
  const first = outages[0];
  if (!first) return null;
  return first.type ? connectorDisplayName(first.type as ConnectorType) : 'an app';
}

/**
 * Per sync, its newest run's start, whether a run is going and its newest completed run's start
 * (whether one ever completed): each an index probe (sync_log_base_recent_idx, sync_log_running_idx)
 * that stops at its first row, where counting every run of a busy sync grew with its history.
 */
export function runStatesQuery(db: Db, ids: string[]) {
  return db
    .selectFrom('core_base as b')
    .where('b.id', 'in', ids)
    .select((eb) => [
      'b.id as core_base_id',
      eb
        .selectFrom('sync_log as l')
        .select('l.started_at')
        .whereRef('l.core_base_id', '=', 'b.id')
        .orderBy('l.started_at', 'desc')
        .limit(1)
        .as('last_started'),
      eb
        .exists(
          eb
            .selectFrom('sync_log as l')
            .select(sql`1`.as('one'))
            .whereRef('l.core_base_id', '=', 'b.id')
            .where('l.status', '=', 'running'),
        )
        .as('running'),
      // The newest completed run's start, not EXISTS: PostgreSQL drops an EXISTS's ORDER BY and
      // LIMIT, and then may scan the table for a busy sync whose runs are mostly completed.
      eb
        .selectFrom('sync_log as l')
        .select('l.started_at')
        .whereRef('l.core_base_id', '=', 'b.id')
        .where('l.status', '=', 'done')
        .orderBy('l.started_at', 'desc')
        .limit(1)
        .as('last_done'),
    ]);
}

export async function syncStatuses(db: Db, rows: CoreBaseRow[]): Promise<SyncStatus[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [runs, issues, mappings, outages] = await Promise.all([
    runStatesQuery(db, ids).execute(),
    db
      .selectFrom('sync_error')
      .select((eb) => ['core_base_id', eb.fn.countAll<number>().as('n')])
      .where('core_base_id', 'in', ids)
      .where('status', '!=', 'resolved')
      .groupBy('core_base_id')
      .execute(),
    db
      .selectFrom('table_mapping')
      .select((eb) => ['core_base_id', eb.fn.countAll<number>().as('n')])
      .where('core_base_id', 'in', ids)
      .groupBy('core_base_id')
      .execute(),
    // Open outage issues (an app that cannot be reached), with the type of the app of their side.
    db
      .selectFrom('sync_error')
      .leftJoin('external_base', (j) =>
        j
          .onRef('external_base.core_base_id', '=', 'sync_error.core_base_id')
          .onRef('external_base.side', '=', 'sync_error.side'),
      )
      .select(['sync_error.core_base_id', 'external_base.type'])
      .where('sync_error.core_base_id', 'in', ids)
      .where('sync_error.status', 'in', ['open', 'retrying'])
      .where((eb) => eb(eb.ref('sync_error.details', '->>').key('scope'), '=', 'outage'))
      .execute(),
  ]);
  return rows.map((row) => {
    const run = runs.find((r) => r.core_base_id === row.id);
    const running = run?.running === true;
    const hasMappings = Number(mappings.find((m) => m.core_base_id === row.id)?.n ?? 0) > 0;
    return {
      coreBaseId: row.id,
      syncState: row.sync_state,
      syncAction: row.sync_state === 'on' && hasMappings ? 'sync' : 'do_nothing',
      label: labelOf({
        syncState: row.sync_state,
        running,
        everCompleted: (run?.last_done ?? null) !== null,
        lastRunStartedAt: run?.last_started ? new Date(run.last_started as Date) : null,
        switchedOnAt: row.sync_state_changed_at ? new Date(row.sync_state_changed_at) : null,
      }),
      lastSyncTime: iso(row.last_sync_time),
      running,
      openIssues: Number(issues.find((i) => i.core_base_id === row.id)?.n ?? 0),
      unreachable: unreachableApp(outages.filter((o) => o.core_base_id === row.id)),
    };
  });
}
