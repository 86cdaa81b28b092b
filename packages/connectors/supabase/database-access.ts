/**
 * The SQL that gives Lockstep its own database role in a Supabase project, run as the project's
 * service user through the Management API (POST /v1/projects/{ref}/database/query):
 *
 * - a LOGIN role `lockstep_<random>` with a random password (set again on each setup);
 * - on the chosen schema: USAGE and CREATE (schema generation makes tables there), and SELECT/INSERT/UPDATE/DELETE/TRIGGER on its tables (TRIGGER for
 *   change capture), USAGE/SELECT/UPDATE on its sequences, the same for tables made later;
 * - the `lockstep` schema for change capture, owned by the role (or, when another Lockstep role
 *   made it, membership of that role); whoever edits a synced table fires the capture trigger, so
 *   everyone may insert into its tables (PostgREST does not expose the schema).
 *
 * Nothing else in the project is granted: no other schema, no superuser, no BYPASSRLS.
 */

export const ROLE_PATTERN = /^lockstep_[a-z0-9_]{1,40}$/;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Schemas Supabase manages itself; they are not offered as bases. */
export const SUPABASE_INTERNAL_SCHEMAS = [
  'auth',
  'storage',
  'realtime',
  '_realtime',
  'extensions',
  'graphql',
  'graphql_public',
  'vault',
  'pgsodium',
  'pgsodium_masks',
  'pgbouncer',
  'supabase_functions',
  'supabase_migrations',
  'net',
  'cron',
  '_analytics',
  'pgmq',
  'pgtle',
  'information_schema',
  'lockstep',
];

export function listSchemasSql(): string {
  return `select nspname as name from pg_namespace
    where nspname not like 'pg\\_%' and nspname not in (${SUPABASE_INTERNAL_SCHEMAS.map(literal).join(', ')})
    order by nspname`;
}

function assertRole(role: string): void {
  if (!ROLE_PATTERN.test(role)) throw new Error(`not a Lockstep role name: ${role}`);
}

/** Creates the role (or sets its password again) and lets it reach the database. */
export function roleSql(role: string, password: string): string {
  assertRole(role);
  if (!/^[A-Za-z0-9_-]{16,}$/.test(password)) throw new Error('password must be random base64url');
  return `do $lockstep$
begin
  if not exists (select 1 from pg_roles where rolname = ${literal(role)}) then
    create role ${ident(role)} with login password ${literal(password)} nosuperuser nocreatedb nocreaterole nobypassrls;
  else
    alter role ${ident(role)} with login password ${literal(password)};
  end if;
  -- The service user joins the role, so it may hand out what the role owns (PostgreSQL 15 and 16 alike).
  if current_user <> ${literal(role)} and not pg_has_role(current_user, ${literal(role)}, 'member') then
    execute format('grant %I to %I', ${literal(role)}, current_user);
  end if;
  execute format('grant connect, create on database %I to %I', current_database(), ${literal(role)});
end
$lockstep$;
${changeCaptureSchemaSql(role)}`;
}

/** The `lockstep` schema (change capture), owned by the role or reachable through the role that made it. */
function changeCaptureSchemaSql(role: string): string {
  return `do $lockstep$
declare owner_name text;
begin
  select pg_get_userbyid(nspowner) into owner_name from pg_namespace where nspname = 'lockstep';
  if owner_name is null then
    execute format('create schema lockstep authorization %I', ${literal(role)});
  elsif owner_name <> ${literal(role)} and owner_name like 'lockstep\\_%' then
    execute format('grant %I to %I', owner_name, ${literal(role)});
  elsif owner_name <> ${literal(role)} then
    execute format('grant usage, create on schema lockstep to %I', ${literal(role)});
    execute format('grant select, insert, update, delete on all tables in schema lockstep to %I', ${literal(role)});
    execute format('grant usage, select, update on all sequences in schema lockstep to %I', ${literal(role)});
  end if;
  grant usage on schema lockstep to public;
  execute format('alter default privileges for role %I in schema lockstep grant insert on tables to public', ${literal(role)});
  execute format('alter default privileges for role %I in schema lockstep grant usage on sequences to public', ${literal(role)});
end
$lockstep$;`;
}

/** The role's rights on one schema: its rows, its sequences, and triggers for change capture. */
export function schemaGrantSql(role: string, schema: string): string {
  assertRole(role);
  const s = ident(schema);
  const r = ident(role);
  return `grant usage, create on schema ${s} to ${r};
grant select, insert, update, delete, trigger on all tables in schema ${s} to ${r};
grant usage, select, update on all sequences in schema ${s} to ${r};
alter default privileges in schema ${s} grant select, insert, update, delete, trigger on tables to ${r};
alter default privileges in schema ${s} grant usage, select, update on sequences to ${r};`;
}

/** Takes back what setup gave (used when a connection is removed); the role stays if it owns objects. */
export function revokeSql(role: string, schemas: string[]): string {
  assertRole(role);
  const r = ident(role);
  const perSchema = schemas
    .map(
      (schema) => `revoke all on all tables in schema ${ident(schema)} from ${r};
revoke all on all sequences in schema ${ident(schema)} from ${r};
revoke usage on schema ${ident(schema)} from ${r};`,
    )
    .join('\n');
  return `${perSchema}
alter role ${r} nologin;`;
}
