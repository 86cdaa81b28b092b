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
  status: 'active' | 'trialing' | 'canceled';
  starts_at: Timestamp;
  expires_at: Timestamp | null;
  created_at: Timestamp;
};

export type CoreBaseTable = {
  id: Generated<string>;
  owner_id: string;
  name: Generated<string>;
  pinned: Generated<boolean>;
  sync_state: Generated<'on' | 'off'>;
  config_extras: Json<Record<string, unknown>>;
  last_sync_time: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

/** One synced record of a core base (both sides' rows linked as one); counted once for plan limits. */
export type CoreMetaRecordTable = {
  id: Generated<string>;
  core_base_id: string;
  owner_id: string;
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
};
