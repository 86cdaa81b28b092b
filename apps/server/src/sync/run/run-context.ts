import type { TableConnector } from '@lockstep/connectors';
import type { ReconcileResult, RecordData, Shadow, WriteOp } from '@lockstep/engine';
import type { Db } from '../../db/database';
import type { SecretBox } from '../../services/secret-box';
import type { MappingPlan } from '../load-sync-plan';
import type { RuntimeConnectors } from '../runtime-connectors';
import type { FollowUp } from '../write-follow-ups';
import type { RecordNamer } from './record-names';

export type Deps = {
  db: Db;
  secretBox: SecretBox;
  connectors: RuntimeConnectors;
  /** A user without a plan works on the dev plan's limits (a local server). */
  localDevPlan?: boolean;
  /** Set for a dry pass (see DryRun): the run records what it would write instead of writing. */
  dryRun?: DryRun;
};

/**
 * A dry pass (sync/dry-pass.ts): runMapping reads and reconciles as a run does, and applyResult
 * hands the operations it would write to `plan` instead of writing them. Nothing else of the run is
 * stored: no recovery or retry, no cursor (they move in `cursors` only, by external table id), link,
 * shadow, log, pending write, pending relation or issue.
 */
export type DryRun = {
  cursors: Map<string, string | null>;
  plan(a: ApplyInput, operations: WriteOp[]): Promise<void>;
};

export type Counts = Record<string, number>;

export type ApplyInput = {
  ownerId: string;
  coreBaseId: string;
  syncLogId: string;
  m: MappingPlan;
  result: ReconcileResult;
  connectors: { left: TableConnector; right: TableConnector };
  counts: Counts;
  /** Names of the records this run read, for its issues (see record-names.ts). */
  recordName?: RecordNamer;
  /** The shadows of the links this chunk loaded, by link id: the before values of updates. */
  shadows: Map<string, Shadow | null>;
  /** Whether the sync has issues not resolved yet; if not, a success has nothing to resolve. */
  openIssues: boolean;
  /** Refused writes to reconcile again (collected here, see write-follow-ups.ts). */
  followUps: FollowUp[];
  /**
   * A chunk of a staged first sync: its creates are not recorded as pending. Its position moves
   * only after its writes, so a crash reconciles the chunk again and each create goes again with
   * the same idempotency key (the app returns the record it made); and the other side is read from
   * the staged download, which cannot hold what this chunk created, until the chunk is done.
   */
  stagedChunk?: boolean;
  /**
   * None of these writes was sent before (recover replayed what a crash left pending; a staged
   * chunk reconciled again is not fresh): connectors may skip looking their keys up. Unset: looked up.
   */
  freshKeys?: boolean;
};

export type RunContext = Omit<
  ApplyInput,
  'result' | 'shadows' | 'openIssues' | 'followUps' | 'stagedChunk' | 'freshKeys'
>;

export const byId = (records: RecordData[]) => new Map(records.map((r) => [r.id, r]));

/**
 * Rows for a set-based statement as one JSON document, read with json_to_recordset: for thousands
 * of rows carrying JSON values this is much cheaper than an array parameter per column (no array
 * literal to escape and parse) or a bind parameter per value.
 */
export const rowsDoc = (rows: object[]) => JSON.stringify(rows);

export const bump = (counts: Counts, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

/** The key of a batch's pending-write row: its kind and its first operation's idempotency key. */
export const pendingBatchKey = (kind: 'create' | 'update', firstKey: string) => `batch:${kind}:${firstKey}`;
