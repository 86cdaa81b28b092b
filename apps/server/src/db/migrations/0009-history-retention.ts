import { type Kysely, sql } from 'kysely';

// Indexes for what the history lists filter and sort on, and for the hourly pruning of old history
// (jobs/prune-history.ts). Each list's ORDER BY (newest first, then id) is the index's own order, so
// a page is read off the index instead of sorting every run, entry or issue of a user.
export async function up(db: Kysely<unknown>): Promise<void> {
  // GET /rest/sync-logs without a sync: one user's runs (it scanned every user's runs).
  await sql`create index if not exists sync_log_owner_idx on sync_log (owner_id, started_at desc, id)`.execute(
    db,
  );
  // One sync's runs, newest first (the list with coreBaseId, sync status, the pruner); it replaces
  // 0002's ascending (core_base_id, started_at), whose every use this one serves.
  await sql`create index if not exists sync_log_base_recent_idx on sync_log (core_base_id, started_at desc, id)`.execute(
    db,
  );
  await sql`drop index if exists sync_log_base_idx`.execute(db);
  // The running run of a sync (sync status, a run resuming its log, the reaper): a handful of rows.
  await sql`create index if not exists sync_log_running_idx on sync_log (core_base_id, started_at) where status = 'running'`.execute(
    db,
  );
  // A run's operations, paged in order (GET /rest/sync-logs/:id); also what deleting a run (its
  // cascade, the pruner) finds them by, which without it read the whole table once per run.
  await sql`create index if not exists sync_log_entry_log_idx on sync_log_entry (sync_log_id, created_at, id)`.execute(
    db,
  );
  // One sync's operations in time order (the operations export streams them in this order).
  await sql`create index if not exists sync_log_entry_base_idx on sync_log_entry (core_base_id, created_at, id)`.execute(
    db,
  );
  // Issues, newest change first: one user's (GET /rest/sync-errors) and one sync's.
  await sql`create index if not exists sync_error_owner_idx on sync_error (owner_id, updated_at desc, id)`.execute(
    db,
  );
  await sql`create index if not exists sync_error_base_recent_idx on sync_error (core_base_id, updated_at desc, id)`.execute(
    db,
  );
  // A record's open issues (its status page), and what deleting a record cascades through.
  await sql`create index if not exists sync_error_record_idx on sync_error (core_meta_record_id) where core_meta_record_id is not null`.execute(
    db,
  );
  // Trace events of a sync newest first (GET /rest/trace-log/:id) and pruning by age: 0002's
  // (core_base_id, created_at) and (trace_id) serve them already.
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists sync_log_base_idx on sync_log (core_base_id, started_at)`.execute(db);
  for (const index of [
    'sync_log_owner_idx',
    'sync_log_base_recent_idx',
    'sync_log_running_idx',
    'sync_log_entry_log_idx',
    'sync_log_entry_base_idx',
    'sync_error_owner_idx',
    'sync_error_base_recent_idx',
    'sync_error_record_idx',
  ]) {
    await sql`drop index if exists ${sql.id(index)}`.execute(db);
  }
}
