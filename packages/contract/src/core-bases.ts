import { z } from 'zod';
import { DEFAULT_SYNC_NAME } from './constants';
import { IsoTimestamp, Uuid } from './formats';

export const Side = z.enum(['left', 'right']);
export type Side = z.infer<typeof Side>;
export const SyncDirection = z.enum(['both', 'left_to_right', 'right_to_left']);
export type SyncDirection = z.infer<typeof SyncDirection>;
export const SyncState = z.enum(['on', 'off']);
export const SyncAction = z.enum(['sync', 'do_nothing']);
export const SyncLabel = z.enum(['Syncing changes', 'Starting up', 'Active', 'Disabled', 'Initial sync']);
export type SyncLabel = z.infer<typeof SyncLabel>;
export const DetailLevel = z.enum(['basic', 'fullBaseSchema']);

export const ExternalColumn = z.object({
  id: Uuid,
  remoteId: z.string(),
  name: z.string(),
  fieldType: z.string(),
  readOnly: z.boolean(),
  options: z.record(z.string(), z.unknown()),
});
export const ExternalTable = z.object({
  id: Uuid,
  remoteId: z.string(),
  name: z.string(),
  externalColumns: z.array(ExternalColumn),
});
export const ExternalBase = z.object({
  id: Uuid,
  type: z.string(),
  name: z.string(),
  remoteId: z.string(),
  coreBaseId: Uuid,
  externalConnectionId: Uuid.nullable(),
  side: Side,
  extras: z.record(z.string(), z.unknown()),
  webhooksEnabled: z.boolean(),
  connectorInfo: z.object({ connectorType: z.string() }),
  externalTables: z.array(ExternalTable),
});
export type ExternalBase = z.infer<typeof ExternalBase>;

export const ColumnMapping = z.object({
  id: Uuid.optional(),
  leftColumnId: Uuid,
  rightColumnId: Uuid,
  syncDirection: SyncDirection,
  ownerSide: Side.nullable().optional(),
  /** Select options paired across; null: options pair by name. */
  optionPairs: z
    .array(z.object({ left: z.string(), right: z.string() }))
    .nullable()
    .optional(),
});
export const TableMapping = z.object({
  id: Uuid,
  leftTableId: Uuid,
  rightTableId: Uuid,
  syncDirection: SyncDirection,
  filter: z.unknown().nullable(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  columnMappings: z.array(ColumnMapping),
  matchOnFieldId: Uuid.nullable(),
  matchOnSecondaryFieldId: Uuid.nullable(),
  conflictWinnerSide: Side,
  conflictReview: z.boolean(),
  deleteProtection: z.boolean(),
});
export type TableMapping = z.infer<typeof TableMapping>;

/** Where a sync was set up from (spec section 5). */
export const SetupOrigin = z.enum(['base_setup', 'app_store']);
export type SetupOrigin = z.infer<typeof SetupOrigin>;

export const CoreBase = z.object({
  id: Uuid,
  name: z.string(),
  setupOrigin: SetupOrigin,
  pinned: z.boolean(),
  syncState: SyncState,
  /** Dry-run mode: every wake-up of the sync makes a dry pass (a plan to review) instead of a run. */
  dryRun: z.boolean().optional(),
  mappings: z.object({ tableMappings: z.array(TableMapping) }),
  configExtras: z.record(z.string(), z.unknown()),
  lastSyncTime: IsoTimestamp.nullable(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  leftExternalBase: ExternalBase.nullable(),
  rightExternalBase: ExternalBase.nullable(),
  debug: z.record(z.string(), z.unknown()).optional(),
});
export type CoreBase = z.infer<typeof CoreBase>;

export const CreateCoreBaseBody = z.strictObject({
  name: z.string().trim().min(1).max(200).default(DEFAULT_SYNC_NAME),
  setupOrigin: SetupOrigin.default('base_setup'),
});

/** A table mapping as the client sends it: an id keeps an existing mapping, none creates one. */
export const TableMappingInput = z.strictObject({
  id: z.string().uuid().optional(),
  leftTableId: z.string().uuid(),
  rightTableId: z.string().uuid(),
  syncDirection: SyncDirection.default('both'),
  filter: z.unknown().nullable().default(null),
  matchOnFieldId: z.string().uuid().nullable().optional(),
  matchOnSecondaryFieldId: z.string().uuid().nullable().optional(),
  conflictWinnerSide: Side.optional(),
  conflictReview: z.boolean().optional(),
  deleteProtection: z.boolean().optional(),
  columnMappings: z
    .array(
      z.strictObject({
        leftColumnId: z.string().uuid(),
        rightColumnId: z.string().uuid(),
        syncDirection: SyncDirection.default('both'),
        ownerSide: Side.nullable().default(null),
        optionPairs: z
          .array(z.strictObject({ left: z.string().min(1).max(500), right: z.string().min(1).max(500) }))
          .max(1000)
          .nullable()
          .default(null),
      }),
    )
    .max(500)
    .default([]),
});

export const PatchCoreBaseBody = z.strictObject({
  syncState: SyncState.optional(),
  name: z.string().trim().min(1).max(200).optional(),
  pinned: z.boolean().optional(),
  dryRun: z.boolean().optional(),
  configExtras: z.record(z.string(), z.unknown()).optional(),
  mappings: z.strictObject({ tableMappings: z.array(TableMappingInput).max(100) }).optional(),
});

export const CoreBaseListFilter = z.strictObject({
  name: z.string().max(200).optional(),
  syncState: SyncState.optional(),
  pinned: z.boolean().optional(),
});

/** GET /core-bases: the list filter as typed query parameters (the JSON `filter` stays, deprecated). */
export const CoreBaseListFilterQuery = z.object({
  name: CoreBaseListFilter.shape.name.meta({
    description: 'Only syncs whose name contains these characters.',
  }),
  syncState: CoreBaseListFilter.shape.syncState.meta({ description: 'Only syncs that are on, or off.' }),
  pinned: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: 'Only pinned (true) or unpinned (false) syncs.' }),
});

export const SyncStatus = z.object({
  coreBaseId: Uuid,
  syncState: SyncState,
  syncAction: SyncAction,
  label: SyncLabel,
  lastSyncTime: IsoTimestamp.nullable(),
  running: z.boolean(),
  openIssues: z.number().int(),
  /** The app the sync cannot reach now (an open outage issue), shown instead of the label; else null. */
  unreachable: z.string().nullable(),
});
export type SyncStatus = z.infer<typeof SyncStatus>;

export const CreateExternalBaseBody = z.strictObject({
  type: z.string().min(1).max(40),
  name: z.string().trim().min(1).max(200),
  remoteId: z.string().min(1).max(500),
  coreBaseId: z.string().uuid(),
  externalConnectionId: z.string().uuid(),
  side: Side,
  extras: z.record(z.string(), z.unknown()).default({}),
});

export const PatchExternalBaseBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  extras: z.record(z.string(), z.unknown()).optional(),
  webhooksEnabled: z.boolean().optional(),
});
