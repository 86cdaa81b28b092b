import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { ensureDatabase } from '../db/database';
import type { AppContext } from '../http/context';
import { type DemoDatabase, seedDemoDatabase } from './demo-databases';

/**
 * Demo databases are shared on a local machine (one person). On a server that offers them to
 * everyone (LOCKSTEP_DEMO=1 outside local mode) each user gets copies of their own, reached through
 * a role of their own: no superuser, no other database (CONNECT is revoked from PUBLIC on theirs,
 * on Lockstep's own and on the maintenance database), so what one tenant syncs there no other
 * tenant reads, and nobody logs in as Lockstep's own superuser.
 */
export function demoDatabasesOffered(ctx: Pick<AppContext, 'config' | 'embeddedDatabaseUrl'>): boolean {
  if (!ctx.embeddedDatabaseUrl) return false;
  const local = ctx.config.environment === 'local' || ctx.config.environment === 'test';
  return local || ctx.config.demo;
}

export const demoPerTenant = (ctx: Pick<AppContext, 'config'>) =>
  ctx.config.environment !== 'local' && ctx.config.environment !== 'test';

export type TenantDemo = { database: string; user: string; password: string };

/** Names from the user id: stable across calls, and nothing a user chooses. */
function tenantKey(userId: string) {
  return createHash('sha256').update(userId).digest('hex').slice(0, 16);
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The user's own copy of a demo database and the role to reach it (made on first use, seeded as that role). */
export async function provisionTenantDemo(
  ctx: Pick<AppContext, 'embeddedDatabaseUrl' | 'secretBox' | 'db'>,
  name: DemoDatabase,
  userId: string,
): Promise<TenantDemo> {
  const adminUrl = ctx.embeddedDatabaseUrl;
  if (!adminUrl) throw new Error('demo databases need the embedded PostgreSQL');
  const key = tenantKey(userId);
  const database = `${name}_t${key}`;
  const user = `lockstep_demo_t${key}`;
  // Derived, so every connect of the same user gives the same password (nothing to store).
  const password = ctx.secretBox.mac(`demo-role:${user}`);
  const admin = new pg.Client({ connectionString: adminUrl('postgres') });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_roles where rolname = $1', [user]);
    const attributes = 'login nosuperuser nocreatedb nocreaterole noreplication nobypassrls';
    // The password is a hex MAC: nothing in it needs quoting beyond the literal's quotes.
    if (exists.rowCount === 0)
      await admin.query(`create role ${ident(user)} ${attributes} password '${password}'`);
    else await admin.query(`alter role ${ident(user)} ${attributes} password '${password}'`);
  } finally {
    await admin.end();
  }
  await ensureDatabase(adminUrl('postgres'), database);
  const own = (await sql<{ name: string }>`select current_database() as name`.execute(ctx.db)).rows[0]?.name;
  const owner = new pg.Client({ connectionString: adminUrl(database) });
  await owner.connect();
  try {
    await owner.query(`alter database ${ident(database)} owner to ${ident(user)}`);
    await owner.query(`revoke connect, temporary on database ${ident(database)} from public`);
    await owner.query(`grant connect on database ${ident(database)} to ${ident(user)}`);
    // Nor can the role reach Lockstep's own database, the maintenance one or the shared demos.
    const others = await owner.query<{ datname: string }>(
      `select datname from pg_database where datname = any($1::text[])`,
      [[own, 'postgres', 'demo_crm', 'demo_newsletter'].filter(Boolean)],
    );
    for (const { datname } of others.rows)
      await owner.query(`revoke connect, temporary on database ${ident(datname)} from public`);
  } finally {
    await owner.end();
  }
  // Seeded as the role itself, so the tables are its own (it may add capture triggers to them).
  const asRole = new URL(adminUrl(database));
  asRole.username = user;
  asRole.password = password;
  await seedDemoDatabase(asRole.toString(), name);
  return { database, user, password };
}
