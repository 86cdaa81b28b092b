import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string | undefined, string>;

/** Tables of better-auth that Lockstep reads (better-auth owns and migrates them). */
export type AuthUserTable = {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  role: string | null;
  banned: boolean | null;
  banReason: string | null;
  banExpires: Timestamp | null;
};

export type AuthSessionTable = {
  id: string;
  userId: string;
  expiresAt: Timestamp;
  impersonatedBy: string | null;
};
export type AuthVerificationTable = { id: string; expiresAt: Timestamp };

export type UserProfileTable = {
  user_id: string;
  experiment_flags: Json<Record<string, boolean | string[]>>;
  most_recent_email: string;
  created_at: Timestamp;
};

export type SubscriptionTable = {
  id: Generated<string>;
  user_id: string;
  product_type: string;
  /** past_due: a payment failed, usable until expires_at (the grace period); incomplete: grants nothing. */
  status: 'active' | 'trialing' | 'past_due' | 'canceled' | 'incomplete';
  starts_at: Timestamp;
  /** When access ends without further word (for a Stripe subscription: see services/billing.ts). */
  expires_at: Timestamp | null;
  created_at: Timestamp;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  /** The end of the period Stripe has billed for (the renewal date, or the end when canceling). */
  current_period_end: Timestamp | null;
  cancel_at_period_end: Generated<boolean>;
  past_due_since: Timestamp | null;
  updated_at: Timestamp;
};

export type StripeWebhookEventTable = {
  event_id: string;
  type: string;
  received_at: Timestamp;
};

export type CoreBaseTable = {
  id: Generated<string>;
  owner_id: string;
  name: Generated<string>;
  pinned: Generated<boolean>;
  sync_state: Generated<'on' | 'off'>;
  config_extras: Json<Record<string, unknown>>;
  last_sync_time: Timestamp | null;
  sync_state_changed_at: Timestamp | null;
  /** Set when "pause all" switched this sync off; "resume all" switches on exactly these. */
  paused_all_at: Timestamp | null;
  /** Where the sync was set up from (spec section 5). */
  setup_origin: Generated<'base_setup' | 'app_store'>;
  /** Dry-run mode: every wake-up of the sync makes a dry pass (a plan to review) instead of a run. */
  dry_run: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type Side = 'left' | 'right';
export type SyncDirection = 'both' | 'left_to_right' | 'right_to_left';

/** One synced record of a core base (both sides' rows linked as one); counted once for plan limits. */
export type CoreMetaRecordTable = {
  id: Generated<string>;
  core_base_id: string;
  owner_id: string;
  table_mapping_id: string | null;
  left_remote_id: string | null;
  right_remote_id: string | null;
  shadow: Json<Record<string, unknown>>;
  shadow_version: Generated<number>;
  sync_disabled: Generated<boolean>;
  /** The batch operation that created this link, when its create was logged with its batch. */
  created_entry_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ExternalConnectionTable = {
  id: Generated<string>;
  owner_id: string;
  type: string;
  name: string;
  secrets: string;
  status: Generated<'ok' | 'broken'>;
  broken_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ExternalBaseTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  external_connection_id: string | null;
  type: string;
  name: string;
  remote_id: string;
  side: Side;
  extras: Json<Record<string, unknown>>;
  webhooks_enabled: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ExternalTableTable = {
  id: Generated<string>;
  owner_id: string;
  external_base_id: string;
  remote_id: string;
  name: string;
  extras: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ExternalColumnTable = {
  id: Generated<string>;
  owner_id: string;
  external_table_id: string;
  remote_id: string;
  name: string;
  field_type: string;
  read_only: Generated<boolean>;
  options: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type TableMappingTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  left_table_id: string;
  right_table_id: string;
  sync_direction: Generated<SyncDirection>;
  filter: Json<unknown> | null;
  match_on_field_id: string | null;
  match_on_secondary_field_id: string | null;
  conflict_winner_side: Generated<Side>;
  conflict_review: Generated<boolean>;
  delete_protection: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ColumnMappingTable = {
  id: Generated<string>;
  owner_id: string;
  table_mapping_id: string;
  left_column_id: string;
  right_column_id: string;
  sync_direction: Generated<SyncDirection>;
  owner_side: Side | null;
  option_pairs: Json<{ left: string; right: string }[]> | null;
};

export type SyncLogTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  trigger: string;
  status: Generated<'running' | 'done' | 'failed' | 'cancelled'>;
  counts: Json<Record<string, number>>;
  error: string | null;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** An undo run: the run it undoes (one undo per run). */
  undo_of: string | null;
  /** An undo run's progress: operations done of all. */
  progress: Json<{ done: number; total: number }> | null;
  /** An undo run's outcome per operation undone. */
  undo_results: Json<UndoResult[]> | null;
};

/** What an undo did with one record of the run it undoes. */
export type UndoResult = {
  entryId: string;
  side: Side;
  operation: 'create' | 'update' | 'delete';
  remoteId: string | null;
  outcome: 'restored' | 'held' | 'failed' | 'unsupported';
  message: string;
};

export type SyncLogEntryTable = {
  id: Generated<string>;
  owner_id: string;
  sync_log_id: string;
  core_base_id: string;
  core_meta_record_id: string | null;
  side: Side;
  operation: 'create' | 'update' | 'delete';
  remote_id: string | null;
  before: Json<unknown> | null;
  after: Json<unknown> | null;
  /** How many records the operation covers: 1, or a batch of creates logged as one (`records`). */
  record_count: Generated<number>;
  records: Json<{ remote: string[]; source: string[] }> | null;
  /** The table pair written (operations logged before migration 0027 have none). */
  table_mapping_id: string | null;
  created_at: Timestamp;
};

export type TraceLogTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  trace_id: string;
  parent_id: string | null;
  event: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
};

export type SyncLogExportTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  format: 'csv' | 'json';
  filters: Json<{ from?: string; to?: string; operation?: 'create' | 'update' | 'delete'; side?: Side }>;
  status: Generated<string>;
  row_count: number | null;
  created_at: Timestamp;
};

export type ApiImportTable = {
  id: Generated<string>;
  owner_id: string;
  name: string;
  /** The fetch configuration, secrets masked (ApiFetchConfig of @lockstep/contract). */
  config: Json<unknown>;
  /** Sealed { auth, headers } holding the secret values. */
  secrets: string;
  external_connection_id: string;
  base_remote_id: string;
  table_remote_id: string;
  mapping: Json<{ sourceField: string; targetFieldId: string }[]>;
  match_target_field_id: string;
  schedule: 'none' | 'hourly' | 'daily';
  max_pages: number;
  max_records: number;
  last_run_status: Generated<'never' | 'queued' | 'running' | 'succeeded' | 'failed'>;
  last_run_at: Timestamp | null;
  last_run_finished_at: Timestamp | null;
  last_run_counts: Json<Record<string, number>> | null;
  last_run_error: string | null;
  last_tracking_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type BlendedTableTable = {
  id: Generated<string>;
  owner_id: string;
  name: string;
  /** Sources, default source and fields (BlendedTableConfig of @lockstep/contract). */
  config: Json<unknown>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type SyncPreviewRecordTable = {
  id: Generated<number>;
  sync_preview_id: string;
  external_table_id: string;
  side: Side;
  remote_id: string;
  fields: Json<Record<string, unknown>>;
  match_key: string | null;
  plan: string | null;
  /** For a record the preview updates: { remoteFieldId: [before, after] }. */
  changes: Json<Record<string, [unknown, unknown]>> | null;
};

export type SyncPreviewProblemTable = {
  id: Generated<number>;
  sync_preview_id: string;
  table_mapping_id: string | null;
  kind: string;
  message: string;
  details: Json<Record<string, unknown>>;
};

export type SyncCursorTable = {
  external_table_id: string;
  owner_id: string;
  cursor: string | null;
  full_scan_complete: Generated<boolean>;
  updated_at: Timestamp;
};

export type FirstSyncStateTable = {
  table_mapping_id: string;
  owner_id: string;
  left_cursor: string | null;
  right_cursor: string | null;
  left_done: Generated<boolean>;
  right_done: Generated<boolean>;
  matched: Generated<boolean>;
  reconcile_side: Generated<string>;
  reconcile_after: Generated<string>;
  /** Staged in this preview's records (sync_preview_record) rather than in first_sync_record. */
  preview_id: string | null;
  /** The chunk whose writes were sent last (side, last staged id): see first-sync.ts. */
  sent_side: string | null;
  sent_through: string | null;
  updated_at: Timestamp;
};

export type FirstSyncRecordTable = {
  id: Generated<string>;
  table_mapping_id: string;
  side: string;
  remote_id: string;
  match_key: string | null;
  fields: Json<Record<string, unknown>>;
};

export type PendingRelationTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  table_mapping_id: string;
  column_mapping_id: string;
  from_side: 'left' | 'right';
  source_id: string;
  value: Json<string[]>;
  attempts: Generated<number>;
  created_at: Generated<Date>;
};

export type PendingWriteTable = {
  idempotency_key: string;
  owner_id: string;
  core_base_id: string;
  core_meta_record_id: string | null;
  side: string;
  operation: string;
  payload: Json<unknown>;
  created_at: Timestamp;
};

export type RunClaimTable = {
  job_id: string;
  core_base_id: string;
  worker_key: number;
  claimed_at: Generated<Timestamp>;
};

export type WorkerProcessTable = {
  worker_key: number;
  started_at: Generated<Timestamp>;
};

export type DeleteApprovalTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  core_meta_record_id: string;
  side: string;
  reason: string;
  status: Generated<'pending' | 'approved' | 'rejected'>;
  created_at: Timestamp;
};

export type HeldConflictTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  core_meta_record_id: string;
  column_mapping_id: string | null;
  left_value: Json<unknown> | null;
  right_value: Json<unknown> | null;
  shadow_value: Json<unknown> | null;
  status: Generated<'open' | 'resolved_left' | 'resolved_right'>;
  created_at: Timestamp;
};

export type SyncErrorTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  core_meta_record_id: string | null;
  external_connection_id: string | null;
  side: Side | null;
  remote_id: string | null;
  code: string;
  message: string;
  user_facing_message: string;
  details: Json<Record<string, unknown>>;
  status: Generated<'open' | 'retrying' | 'resolved'>;
  attempts: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type ProgressTrackerTable = {
  id: Generated<string>;
  owner_id: string;
  kind: string;
  status: Generated<'PENDING' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED'>;
  done: Generated<number>;
  total: number | null;
  message: string | null;
  result: Json<unknown> | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type SyncPreviewTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  status: Generated<string>;
  core_table_ids: Json<string[]>;
  tracking_id: string | null;
  summary: Json<Record<string, unknown>>;
  /** Where each downloaded external table's read ended, by external table id (null until downloaded). */
  cursors: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  /** The match fields each downloaded table's keys were made with, by external table id. */
  keyed_on: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  /** The staff member who started it for the owner (POST /sync-preview/internal); null for the owner's own. */
  requested_by: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type OwnerRecordCountTable = {
  owner_id: string;
  n: ColumnType<string, string | number, string | number>;
};

export type SyncPreviewPairTable = {
  sync_preview_id: string;
  table_mapping_id: string;
  left_remote_id: string;
  right_remote_id: string;
};

/** Signed webhook events seen per connection (Notion, HubSpot), kept for the freshness window. */
export type AppWebhookEventTable = {
  external_connection_id: string;
  event_id: string;
  received_at: Generated<Timestamp>;
};

export type GitSyncTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  repo_kind: 'https' | 'local';
  repo_url: string | null;
  repo_path: string | null;
  /** Sealed { token, username? } of an HTTPS repository (secret-box); never returned by the API. */
  secret: string | null;
  branch: string;
  folder: string;
  sides: Json<Side[]>;
  format: Generated<'csv' | 'jsonl'>;
  /** The commit whose files are the shadow of the next download (last uploaded or applied). */
  last_synced_commit: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type GitSyncRunTable = {
  id: Generated<string>;
  owner_id: string;
  git_sync_id: string;
  kind: 'upload' | 'download' | 'fetch_schema';
  status: Generated<'PENDING' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED'>;
  done: Generated<number>;
  total: number | null;
  message: string | null;
  base_commit: string | null;
  commit_id: string | null;
  counts: Json<unknown[]>;
  conflicts: Json<unknown[]>;
  problems: Json<string[]>;
  error: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
};

/** One dry pass of a sync (see sync/dry-pass.ts); a sync's latest pass replaces the ones before. */
export type DryRunTable = {
  id: Generated<string>;
  owner_id: string;
  core_base_id: string;
  trigger: string;
  status: Generated<'queued' | 'running' | 'done' | 'failed' | 'discarded' | 'applied'>;
  /** Planned writes by `${tableMappingId}:${kind}`, and `total`. */
  counts: Json<Record<string, number>>;
  progress: Json<{ pairs?: number; pairsDone?: number; pages?: number; records?: number }>;
  error: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
};

/** A write a dry pass would have made: one per record and side. */
export type DryRunWriteTable = {
  id: Generated<string>;
  dry_run_id: string;
  table_mapping_id: string;
  side: Side;
  operation: 'create' | 'update' | 'delete';
  /** The record it is about on the written side (its id), or `create:<source id>` for a new one. */
  record_key: string;
  link_id: string | null;
  remote_id: string | null;
  source_id: string | null;
  name: string | null;
  fields: Json<DryRunField[]>;
  conflicts: Json<DryRunConflict[]>;
};
export type DryRunField = { fieldId: string; field: string; before: unknown; after: unknown };
export type DryRunConflict = {
  field: string;
  left: unknown;
  right: unknown;
  /** The side whose value the engine chose, or null: held for the user to decide. */
  winner: Side | null;
};

export type ApiTokenTable = {
  id: Generated<string>;
  owner_id: string;
  name: string;
  scopes: string[];
  token_hash: string;
  prefix: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
};

export type WebhookSubscriptionTable = {
  id: Generated<string>;
  owner_id: string;
  url: string;
  events: string[];
  /** The HMAC secret, sealed (secret-box); shown once at creation. */
  secret_sealed: string;
  paused: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type WebhookDeliveryAttemptTable = {
  id: Generated<string>;
  subscription_id: string;
  owner_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  created_at: Timestamp;
};

export type Database = {
  user: AuthUserTable;
  session: AuthSessionTable;
  verification: AuthVerificationTable;
  user_profile: UserProfileTable;
  subscription: SubscriptionTable;
  core_base: CoreBaseTable;
  core_meta_record: CoreMetaRecordTable;
  external_connection: ExternalConnectionTable;
  external_base: ExternalBaseTable;
  external_table: ExternalTableTable;
  external_column: ExternalColumnTable;
  table_mapping: TableMappingTable;
  column_mapping: ColumnMappingTable;
  sync_log: SyncLogTable;
  sync_error: SyncErrorTable;
  sync_log_entry: SyncLogEntryTable;
  trace_log: TraceLogTable;
  sync_log_export: SyncLogExportTable;
  api_import: ApiImportTable;
  blended_table: BlendedTableTable;
  sync_cursor: SyncCursorTable;
  first_sync_state: FirstSyncStateTable;
  first_sync_record: FirstSyncRecordTable;
  sync_preview_record: SyncPreviewRecordTable;
  sync_preview_problem: SyncPreviewProblemTable;
  pending_write: PendingWriteTable;
  run_claim: RunClaimTable;
  worker_process: WorkerProcessTable;
  pending_relation: PendingRelationTable;
  delete_approval: DeleteApprovalTable;
  held_conflict: HeldConflictTable;
  progress_tracker: ProgressTrackerTable;
  sync_preview: SyncPreviewTable;
  sync_preview_pair: SyncPreviewPairTable;
  app_webhook_event: AppWebhookEventTable;
  stripe_webhook_event: StripeWebhookEventTable;
  owner_record_count: OwnerRecordCountTable;
  git_sync: GitSyncTable;
  git_sync_run: GitSyncRunTable;
  dry_run: DryRunTable;
  dry_run_write: DryRunWriteTable;
  api_token: ApiTokenTable;
  webhook_subscription: WebhookSubscriptionTable;
  webhook_delivery_attempt: WebhookDeliveryAttemptTable;
};
