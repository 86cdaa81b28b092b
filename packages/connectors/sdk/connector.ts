import type { CanonicalValue, RecordData } from '@lockstep/engine';
import type { RateLimitPolicy } from './rate-limit-policy';

/** One error code set for every app; the runtime decides from it: retry, pause and tell, fail the record, rescan. */
export const CONNECTOR_ERROR_CODES = [
  'auth_invalid',
  'permission_denied',
  'rate_limited',
  'not_found',
  'validation',
  'version_conflict',
  'cursor_invalid',
  'transient',
] as const;
export type ConnectorErrorCode = (typeof CONNECTOR_ERROR_CODES)[number];

export class ConnectorError extends Error {
  constructor(
    readonly code: ConnectorErrorCode,
    message: string,
    readonly userFacingMessage: string = message,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

/** Transient failures and rate limits are retried with backoff; the others need a person or a rescan. */
export function isRetryable(code: ConnectorErrorCode): boolean {
  return code === 'transient' || code === 'rate_limited' || code === 'version_conflict';
}

/**
 * One page of a table. The cursor is opaque to everyone but the connector; a null cursor asks for a
 * full scan, and `scanComplete` says this one page holds the whole table (absence in it is then
 * evidence: the runtime reconciles a scanComplete page against every link). A scan over several pages
 * never sets it; such connectors report deletes as `deletedIds` on a later pass.
 */
export type ReadPage = {
  records: RecordData[];
  deletedIds: string[];
  nextCursor: string;
  hasMore: boolean;
  scanComplete: boolean;
  /** The most of `deletedIds` one transaction deleted, where the app tells (see the engine's ChangeSet). */
  largestDeleteBatch?: number;
  /**
   * Changes exist that cannot be read yet without breaking commit order (they wait behind a
   * transaction still running): the runtime reads again shortly, even if nothing wakes it.
   */
  waiting?: boolean;
};

export type WriteRequest =
  | { kind: 'create'; fields: Record<string, CanonicalValue>; idempotencyKey: string }
  | {
      kind: 'update';
      remoteId: string;
      fields: Record<string, CanonicalValue>;
      idempotencyKey: string;
      /**
       * Canonical values the record must still hold in these fields for the write to land (what
       * Lockstep last read). A connector that can compare-and-set refuses a changed record with
       * `version_conflict` and its `current` state; one that cannot ignores this.
       */
      expected?: Record<string, CanonicalValue>;
    }
  | {
      kind: 'delete';
      remoteId: string;
      idempotencyKey: string;
      /** As for an update: delete only a record that still holds these values (an edit since is spared). */
      expected?: Record<string, CanonicalValue>;
    };

/**
 * `freshKeys`: the caller has never sent any of these idempotency keys before (not a replay after a
 * crash, not a retry of an unknown outcome), so a connector that keeps keys may skip looking them up
 * and may keep them per batch rather than per record. Without it, every key is looked up.
 */
export type WriteOptions = { freshKeys?: boolean };

/** Per item: the app's post-image (what it stored) on success, or an error for that item only. */
export type WriteResult =
  | { ok: true; remoteId: string; postImage: RecordData | null }
  | {
      ok: false;
      error: { code: ConnectorErrorCode; message: string; userFacingMessage: string };
      /** A conditional update found the record changed: what it holds now (null: it is gone). */
      current?: RecordData | null;
      /** A create refused because this record already holds its unique value (e.g. the same key). */
      existingId?: string;
    };

export type Capabilities = {
  batchSize: number;
  /**
   * Writes of many records in one job cost fewer requests than the same records in `batchSize`
   * pieces (Salesforce's Bulk API 2.0 ingest: a handful of calls per job, from 2,000 records). The
   * runtime then hands this connector write batches up to this size, and a first sync reconciles
   * chunks at least this large, so big writes reach the bulk path.
   */
  bulkWriteSize?: number;
  incrementalRead: boolean;
  deleteDetection: 'events' | 'full_scan' | 'none';
  webhooks: boolean;
  /** The app's documented limits; the connector's RateLimiter gives its HttpClient a permit per request. */
  rateLimit?: RateLimitPolicy;
  /**
   * Every record read carries every field of its table, empty ones included (a database row). The
   * runtime then takes a mapped field missing from a record as the field being gone (renamed or
   * dropped), not as an empty value, and stops that table pair instead of clearing the other side.
   */
  recordsCarryEveryField?: boolean;
};

/** A connected table source, as the runtime uses it during a run. */
export type TableConnector = {
  capabilities: Capabilities;
  read(tableRemoteId: string, cursor: string | null, options: { pageSize: number }): Promise<ReadPage>;
  write(tableRemoteId: string, requests: WriteRequest[], options?: WriteOptions): Promise<WriteResult[]>;
  /**
   * The records with these ids as they are now (ids not found are left out), for a retry or a
   * record's status to compare live values; connectors that cannot fetch by id leave it out.
   */
  readRecords?(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
};
