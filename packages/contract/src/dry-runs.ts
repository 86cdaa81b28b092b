import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';

/** The kinds of write a dry pass plans. */
export const DryRunKind = z.enum(['create', 'update', 'delete']);
export type DryRunKind = z.infer<typeof DryRunKind>;

export const DryRunStatus = z.enum(['queued', 'running', 'done', 'failed', 'discarded', 'applied']);
export type DryRunStatus = z.infer<typeof DryRunStatus>;

/** Planned writes of one table pair, by kind. */
export const DryRunTablePair = z.object({
  tableMappingId: Uuid,
  leftTable: z.string(),
  rightTable: z.string(),
  create: z.number().int(),
  update: z.number().int(),
  delete: z.number().int(),
});
export type DryRunTablePair = z.infer<typeof DryRunTablePair>;

/** A dry pass of a sync: what the next run would write. */
export const DryRunPass = z.object({
  id: z.string(),
  status: DryRunStatus,
  trigger: z.string(),
  /** Why it stopped, or which table pairs it could not plan (their first sync is not done). */
  error: z.string().nullable(),
  progress: z.object({
    pairs: z.number().int(),
    pairsDone: z.number().int(),
    pages: z.number().int(),
  }),
  total: z.number().int(),
  tablePairs: z.array(DryRunTablePair),
  createdAt: IsoTimestamp,
  startedAt: IsoTimestamp.nullable(),
  finishedAt: IsoTimestamp.nullable(),
});
export type DryRunPass = z.infer<typeof DryRunPass>;

/** A write the pass would have made, on one record of one side. */
export const DryRunWrite = z.object({
  id: z.string(),
  tableMappingId: Uuid,
  side: z.enum(['left', 'right']),
  kind: DryRunKind,
  /** The written record's id (null for a create: the record does not exist yet). */
  recordId: z.string().nullable(),
  /** A create's source record on the other side. */
  sourceId: z.string().nullable(),
  name: z.string().nullable(),
  /** The fields written, before (from what Lockstep last synced) and after. */
  fields: z.array(
    z.object({ fieldId: z.string(), field: z.string(), before: z.unknown(), after: z.unknown() }),
  ),
  /** Conflicts the engine decided on this record: `winner` null means held for the user. */
  conflicts: z.array(
    z.object({
      field: z.string(),
      left: z.unknown(),
      right: z.unknown(),
      winner: z.enum(['left', 'right']).nullable(),
    }),
  ),
});
export type DryRunWrite = z.infer<typeof DryRunWrite>;

export const DryRunQuery = z.strictObject({
  skip: z.coerce.number().int().min(0).default(0),
  take: z.coerce.number().int().min(1).max(500).default(50),
  tableMappingId: z.string().uuid().optional(),
  kind: DryRunKind.optional(),
});

export const DryRunAnswer = z.object({
  /** Dry-run mode: every wake-up of the sync makes a dry pass instead of a run. */
  dryRunMode: z.boolean(),
  /** The latest pass, or null if none was made (or the plan was applied and cleared). */
  pass: DryRunPass.nullable(),
  /** A newer pass queued or reading; its plan replaces `pass` once it finishes. */
  next: z.object({ id: z.string(), status: DryRunStatus, progress: DryRunPass.shape.progress }).nullable(),
  writes: z.object({
    total: z.number().int(),
    skip: z.number().int(),
    take: z.number().int(),
    items: z.array(DryRunWrite),
  }),
});
export type DryRunAnswer = z.infer<typeof DryRunAnswer>;
