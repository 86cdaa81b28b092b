import { type Kysely, sql } from 'kysely';

// Which worker process carries each active sync run, so a run whose process died is taken over in
// seconds (see jobs/worker-liveness.ts) instead of after a missed queue heartbeat (~25 s).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists run_claim (
    job_id uuid primary key,
    core_base_id uuid not null references core_base(id) on delete cascade,
    worker_key integer not null,
    claimed_at timestamptz not null default now())`.execute(db);
  await sql`create index if not exists run_claim_worker_idx on run_claim (worker_key)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists run_claim`.execute(db);
}
