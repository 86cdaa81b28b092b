import { type Kysely, sql } from 'kysely';

// When each live worker process started (database clock), so a sync-run job that a process fetched
// and died before claiming is seen as orphaned: no claim, and every live worker started after the
// job did (see jobs/worker-liveness.ts). Without it that run waited for the queue's heartbeat.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists worker_process (
    worker_key integer primary key,
    started_at timestamptz not null default now())`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists worker_process`.execute(db);
}
