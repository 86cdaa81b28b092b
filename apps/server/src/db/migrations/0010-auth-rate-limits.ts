import { type Kysely, sql } from 'kysely';

// Sign-in, sign-up, password reset and temporary-connection limits (src/http/auth-rate-limit.ts) keep
// their events in lockstep_rate_limit_events under keys starting 'auth:'. A key tried once (an
// address, an email) is never tried again to delete its old events: the hourly purge deletes them,
// and this index keeps that delete from reading the connectors' events.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists lockstep_rate_limit_events_auth_at_idx
    on lockstep_rate_limit_events (at) where key like 'auth:%'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists lockstep_rate_limit_events_auth_at_idx`.execute(db);
}
