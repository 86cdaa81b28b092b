import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';

export const PURGE_EXPIRED_SESSIONS = 'purge-expired-sessions';

/** Hourly: removes expired sessions and verification tokens, which better-auth leaves behind. */
export async function purgeExpiredSessions(db: Db): Promise<{ sessions: number; verifications: number }> {
  const now = new Date();
  const sessions = await db.deleteFrom('session').where('expiresAt', '<', now).executeTakeFirst();
  const verifications = await db.deleteFrom('verification').where('expiresAt', '<', now).executeTakeFirst();
  return { sessions: Number(sessions.numDeletedRows), verifications: Number(verifications.numDeletedRows) };
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
