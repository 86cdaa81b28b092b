import { createHmac } from 'node:crypto';
import type { CurrentUser, ExperimentFlags, UserSummary } from '@lockstep/contract';
import { sql } from 'kysely';
import { STAFF_ROLE } from '../auth/auth';
import type { Db } from '../db/database';
import { notFound } from '../http/http-error';
import { subscriptionOf } from './subscriptions';

export const toRole = (role: string | null | undefined): 'user' | 'staff' =>
  role?.split(',').includes(STAFF_ROLE) ? 'staff' : 'user';

/** Creates the product record of a user; idempotent so a replayed hook changes nothing. */
export async function ensureProfile(db: Db, user: { id: string; email: string }): Promise<void> {
  await db
    .insertInto('user_profile')
    .values({ user_id: user.id, most_recent_email: user.email, experiment_flags: '{}' })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}

async function loadUser(db: Db, userId: string) {
  const row = await db
    .selectFrom('user')
    .leftJoin('user_profile', 'user_profile.user_id', 'user.id')
    .select([
      'user.id',
      'user.name',
      'user.email',
      'user.emailVerified',
      'user.role',
      'user.createdAt',
      'user_profile.experiment_flags',
      'user_profile.most_recent_email',
      'user_profile.created_at as profile_created_at',
    ])
    .where('user.id', '=', userId)
    .executeTakeFirst();
  if (!row) throw notFound('User');
  return row;
}

/** The signed-in user with the fields of spec section 3. */
export async function currentUser(
  db: Db,
  userId: string,
  impersonatedBy: string | null,
  intercomSecret: string,
): Promise<CurrentUser> {
  const row = await loadUser(db, userId);
  if (row.profile_created_at === null) await ensureProfile(db, row);
  const subscription = await subscriptionOf(db, userId);
  return {
    id: row.id,
    displayName: row.name || row.email,
    email: row.email,
    role: toRole(row.role),
    impersonatedBy,
    identityUser: { id: row.id, email: row.email, name: row.name, emailVerified: row.emailVerified },
    lockstepUser: {
      id: row.id,
      // Identity verification for the support chat: an HMAC of the user id with the server's secret.
      intercomHash: createHmac('sha256', intercomSecret).update(row.id).digest('hex'),
      createdAt: (row.profile_created_at ?? row.createdAt).toISOString(),
      mostRecentEmail: row.most_recent_email ?? row.email,
      experimentFlags: (row.experiment_flags ?? {}) as ExperimentFlags,
      subscription,
    },
  };
}

export async function userSummary(db: Db, userId: string): Promise<UserSummary> {
  const row = await loadUser(db, userId);
  return {
    id: row.id,
    displayName: row.name || row.email,
    email: row.email,
    role: toRole(row.role),
    createdAt: row.createdAt.toISOString(),
    subscription: await subscriptionOf(db, row.id),
  };
}

/** Staff search by email or name, newest first, paged. */
export async function searchUsers(db: Db, q: string, skip: number, take: number) {
  const pattern = `%${q.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where =
    q === '' ? sql<boolean>`true` : sql<boolean>`(email ilike ${pattern} or name ilike ${pattern})`;
  const [rows, total] = await Promise.all([
    db
      .selectFrom('user')
      .select('id')
      .where(where)
      .orderBy('createdAt', 'desc')
      .orderBy('id')
      .offset(skip)
      .limit(take)
      .execute(),
    db
      .selectFrom('user')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(where)
      .executeTakeFirstOrThrow(),
  ]);
  const items = await Promise.all(rows.map((r) => userSummary(db, r.id)));
  return { items, total: Number(total.n), skip, take };
}

export async function setExperimentFlags(db: Db, userId: string, flags: ExperimentFlags): Promise<void> {
  await loadUser(db, userId);
  await db
    .updateTable('user_profile')
    .set({ experiment_flags: JSON.stringify(flags) })
    .where('user_id', '=', userId)
    .execute();
}

/** Deletes a user and, by cascade, their sessions, accounts, profile, subscriptions and syncs. */
export async function deleteUser(db: Db, userId: string): Promise<void> {
  const result = await db.deleteFrom('user').where('id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notFound('User');
}

/** Staff by email: from LOCKSTEP_STAFF_EMAILS at start-up, or the CLI. */
export async function grantStaff(db: Db, email: string, staff = true): Promise<boolean> {
  const result = await db
    .updateTable('user')
    .set({ role: staff ? STAFF_ROLE : 'user' })
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
