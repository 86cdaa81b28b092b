import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';

export const PURGE_EXPIRED_SESSIONS = 'purge-expired-sessions';

/**
 * Hourly: removes expired sessions and verification tokens, which better-auth leaves behind, and the
 * sign-in/sign-up rate-limit events older than a day (the longest window allowed), which a key tried
 * once would otherwise keep (migration 0010-auth-rate-limits).
 */
export async function purgeExpiredSessions(
  db: Db,
): Promise<{ sessions: number; verifications: number; rateLimitEvents: number }> {
  const now = new Date();
  const sessions = await db.deleteFrom('session').where('expiresAt', '<', now).executeTakeFirst();
  const verifications = await db.deleteFrom('verification').where('expiresAt', '<', now).executeTakeFirst();
  const events = await sql`delete from lockstep_rate_limit_events
    where key like 'auth:%' and at < clock_timestamp() - interval '1 day'`.execute(db);
  return {
    sessions: Number(sessions.numDeletedRows),
    verifications: Number(verifications.numDeletedRows),
    rateLimitEvents: Number(events.numAffectedRows ?? 0),
  };
}

export async function registerPurgeExpiredSessions(boss: PgBoss, db: Db, runWorkers: boolean) {
  await boss.createQueue(PURGE_EXPIRED_SESSIONS);
  await boss.schedule(PURGE_EXPIRED_SESSIONS, '17 * * * *');
  if (runWorkers) {
    await boss.work(PURGE_EXPIRED_SESSIONS, async () => {
      await purgeExpiredSessions(db);
    });
  }
}
