import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';
import { Paged, PageQuery } from './users';

export const JobStatus = z.enum(['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED']);
export type JobStatus = z.infer<typeof JobStatus>;
export const RunResult = z.enum(['more_work', 'done', 'failed']);

export const Progress = z.object({
  trackingId: Uuid,
  kind: z.string(),
  status: JobStatus,
  done: z.number(),
  total: z.number().nullable(),
  percent: z.number().nullable(),
  message: z.string().nullable(),
  result: z.unknown().nullable(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type Progress = z.infer<typeof Progress>;

export const UndoResult = z.object({
  entryId: z.string(),
  side: z.enum(['left', 'right']),
  operation: z.enum(['create', 'update', 'delete']),
  remoteId: z.string().nullable(),
  outcome: z.enum(['restored', 'held', 'failed', 'unsupported']),
  message: z.string(),
});
export type UndoResult = z.infer<typeof UndoResult>;

export const SyncLog = z.object({
  id: Uuid,
  coreBaseId: Uuid,
  trigger: z.string(),
  status: z.enum(['running', 'done', 'failed', 'cancelled']),
  counts: z.record(z.string(), z.number()),
  error: z.string().nullable(),
  startedAt: IsoTimestamp,
  finishedAt: IsoTimestamp.nullable(),
  /** An undo run: the run it undoes. */
  undoOf: Uuid.nullable().optional(),
  /** The undo of this run, if it was undone (or its undo is under way). */
  undoneBy: z.string().nullable().optional(),
  /** An undo run's progress: records done of all. */
  progress: z.object({ done: z.number().int(), total: z.number().int() }).nullable().optional(),
  /** An undo run's outcome per record: restored, held (changed since the run), failed or unsupported. */
  undoResults: z.array(UndoResult).nullable().optional(),
});
export type SyncLog = z.infer<typeof SyncLog>;

export const SyncLogEntry = z.object({
  id: Uuid,
  syncLogId: Uuid,
  coreMetaRecordId: Uuid.nullable(),
  side: z.enum(['left', 'right']),
  operation: z.enum(['create', 'update', 'delete']),
  remoteId: z.string().nullable(),
  before: z.unknown().nullable(),
  after: z.unknown().nullable(),
  /** 1, or the size of a batch of creates logged as one operation (a first sync's chunk). */
  recordCount: z.number().int(),
  /** A batch's records: the ids created and the ids they were copied from, in the same order. */
  records: z.object({ remote: z.array(z.string()), source: z.array(z.string()) }).nullable(),
  createdAt: IsoTimestamp,
});

export const SyncLogDetail = SyncLog.extend({ entries: Paged(SyncLogEntry) });

export const SyncLogQuery = PageQuery.extend({
  coreBaseId: z.string().uuid().optional(),
  status: z.enum(['running', 'done', 'failed', 'cancelled']).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});

export const SyncErrorStatus = z.enum(['open', 'retrying', 'resolved']);
export const SyncError = z.object({
  id: Uuid,
  coreBaseId: Uuid,
  coreMetaRecordId: Uuid.nullable(),
  externalConnectionId: Uuid.nullable(),
  side: z.enum(['left', 'right']).nullable(),
  remoteId: z.string().nullable(),
  /** The record as a person knows it (its match or name field), when the run that found the issue read it. */
  recordName: z.string().nullable(),
  code: z.string(),
  message: z.string(),
  userFacingMessage: z.string(),
  details: z.record(z.string(), z.unknown()),
  status: SyncErrorStatus,
  attempts: z.number().int(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type SyncError = z.infer<typeof SyncError>;

/** Issues page filters, sent as JSON in the `filters` query (spec section 2). */
export const SyncErrorFilters = z.strictObject({
  coreBaseId: z.string().uuid().optional(),
  status: SyncErrorStatus.optional(),
  code: z.string().max(60).optional(),
  side: z.enum(['left', 'right']).optional(),
  /** One cause: the exact message the issues of a group share (see /sync-errors/by-cause). */
  message: z.string().max(2000).optional(),
  /** Words in the message or the record id. */
  search: z.string().trim().min(1).max(200).optional(),
  tableMappingId: z.string().uuid().optional(),
});

/** The old form of the issue filters: one JSON string, kept because the spec names it (section 2). */
export const DeprecatedJsonFilters = (example: string) =>
  z
    .string()
    .max(2000)
    .optional()
    .meta({
      deprecated: true,
      description: `Deprecated: the same filters as one JSON object, e.g. ${example}. Use the typed parameters instead; a filter may not be given both ways.`,
    });

/**
 * GET /sync-errors and /sync-errors/by-cause: the filters as typed query parameters, each with the
 * same rule as inside the JSON `filters` (still accepted, deprecated).
 */
export const SyncErrorListQuery = PageQuery.extend({
  coreBaseId: SyncErrorFilters.shape.coreBaseId.meta({ description: 'Only the issues of this sync.' }),
  status: SyncErrorFilters.shape.status.meta({ description: 'Only issues in this state.' }),
  code: SyncErrorFilters.shape.code.meta({ description: 'Only issues with this code, e.g. validation.' }),
  side: SyncErrorFilters.shape.side.meta({ description: 'Only issues on this side of the sync.' }),
  message: SyncErrorFilters.shape.message.meta({
    description: 'One cause: the exact message the issues of a group share (see /sync-errors/by-cause).',
  }),
  search: SyncErrorFilters.shape.search.meta({ description: 'Words in the message or the record id.' }),
  tableMappingId: SyncErrorFilters.shape.tableMappingId.meta({
    description: 'Only issues of this table pair.',
  }),
  filters: DeprecatedJsonFilters('{"coreBaseId":"…","status":"open"}'),
});
export type SyncErrorListQuery = z.infer<typeof SyncErrorListQuery>;

/** Issues that share a cause: one sync, code, side, table pair and message, with how many. */
export const SyncErrorCause = z.object({
  coreBaseId: Uuid,
  code: z.string(),
  side: z.enum(['left', 'right']).nullable(),
  tableMappingId: Uuid.nullable(),
  userFacingMessage: z.string(),
  count: z.number().int(),
  lastSeenAt: IsoTimestamp,
  /** A few record ids of the group, to show which records. */
  remoteIds: z.array(z.string()),
  /** The same records with their names (null where the run did not read one). */
  records: z.array(z.object({ remoteId: z.string(), name: z.string().nullable() })),
});
export type SyncErrorCause = z.infer<typeof SyncErrorCause>;

export const SuggestedFix = z.object({
  errorId: z.string(),
  source: z.enum(['rules', 'llm']),
  title: z.string(),
  steps: z.array(z.string()),
});

export const TraceLog = z.object({
  id: Uuid,
  coreBaseId: Uuid,
  traceId: z.string(),
  parentId: z.string().nullable(),
  event: z.string(),
  data: z.record(z.string(), z.unknown()),
  createdAt: IsoTimestamp,
  children: z.array(z.unknown()).optional(),
});

export const SyncLogExportFilters = z.strictObject({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  operation: z.enum(['create', 'update', 'delete']).optional(),
  side: z.enum(['left', 'right']).optional(),
});
export const CreateSyncLogExportBody = z.strictObject({
  format: z.enum(['csv', 'json']),
  filters: SyncLogExportFilters.default({}),
});
export const SyncLogExport = z.object({
  id: Uuid,
  coreBaseId: Uuid,
  format: z.enum(['csv', 'json']),
  filters: SyncLogExportFilters,
  status: z.string(),
  rowCount: z.number().int().nullable(),
  createdAt: IsoTimestamp,
  downloadPath: z.string(),
});

export const CoreMetaRecord = z.object({
  id: Uuid,
  coreBaseId: Uuid,
  tableMappingId: Uuid.nullable(),
  leftRemoteId: z.string().nullable(),
  rightRemoteId: z.string().nullable(),
  shadow: z.record(z.string(), z.unknown()),
  shadowVersion: z.number().int(),
  syncDisabled: z.boolean(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});

export const CoreMetaRecordStatus = CoreMetaRecord.extend({
  openIssues: z.array(
    z.object({
      id: z.string(),
      code: z.string(),
      userFacingMessage: z.string(),
      side: z.string().nullable(),
    }),
  ),
  lastChange: z.object({ at: z.string(), side: z.string(), operation: z.string() }).nullable(),
  /**
   * Both records read live and compared with the shadow: in step only if each side holds what was
   * last synced (null when the apps cannot be read by id, or could not be reached).
   */
  live: z.object({
    inStep: z.boolean().nullable(),
    differences: z.array(z.object({ fieldMappingId: Uuid, side: z.enum(['left', 'right']) })),
    why: z.string().nullable(),
  }),
});

export const RecordHistoryEntry = z.object({
  id: z.string(),
  syncLogId: Uuid,
  side: z.enum(['left', 'right']),
  operation: z.enum(['create', 'update', 'delete']),
  remoteId: z.string().nullable(),
  before: z.unknown().nullable(),
  after: z.unknown().nullable(),
  /** 1, or the size of the batch of creates this record was created in. */
  recordCount: z.number().int(),
  createdAt: IsoTimestamp,
});
