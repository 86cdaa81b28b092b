import type {
  CoreMetaRecord as CoreMetaRecordSchema,
  CoreMetaRecordStatus as CoreMetaRecordStatusSchema,
  RecordHistoryEntry as RecordHistoryEntrySchema,
  SuggestedFix as SuggestedFixSchema,
  SyncLogDetail as SyncLogDetailSchema,
  SyncLogEntry as SyncLogEntrySchema,
  SyncLogExport as SyncLogExportSchema,
  TraceLog as TraceLogSchema,
} from '@lockstep/contract';

// The contract exports these answers as schemas only: their types are read off the schemas, so
// the screens follow the server's shapes without a copy to keep in step.
type Out<S extends { _output: unknown }> = S['_output'];

export type SyncLogDetail = Out<typeof SyncLogDetailSchema>;
export type SyncLogEntry = Out<typeof SyncLogEntrySchema>;
export type SyncLogExport = Out<typeof SyncLogExportSchema>;
export type SuggestedFix = Out<typeof SuggestedFixSchema>;
export type CoreMetaRecord = Out<typeof CoreMetaRecordSchema>;
export type CoreMetaRecordStatus = Out<typeof CoreMetaRecordStatusSchema>;
export type RecordHistoryEntry = Out<typeof RecordHistoryEntrySchema>;
export type TraceLog = Out<typeof TraceLogSchema>;
/** A trace event as GET /rest/trace-log/{coreBaseId}/{traceId}?nestEvents=true answers it. */
export type TraceEvent = Omit<TraceLog, 'children'> & { children?: TraceEvent[] };

export const RUN_STATUS_COLOR = { running: 'blue', done: 'green', failed: 'red', cancelled: 'gray' } as const;
export const ISSUE_STATUS_COLOR = { open: 'red', retrying: 'orange', resolved: 'green' } as const;
export const OPERATION_COLOR = { create: 'green', update: 'blue', delete: 'red' } as const;
