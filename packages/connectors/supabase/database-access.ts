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
  -- The service user joins the role (inheriting it), so it may hand out, pass on and drop what the
  -- role owns. PostgreSQL 16 and later give a non-superuser that creates a role only ADMIN on it,
  -- which counts as 'member' but neither inherits nor allows SET ROLE: hence 'usage'.
  if current_user <> ${literal(role)} and not pg_has_role(current_user, ${literal(role)}, 'usage') then
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

/** What takes back what setup gave, by hand (the SQL editor), when Lockstep could not. */
export function dropRoleByHandSql(role: string): string {
  assertRole(role);
  const r = ident(role);
  return `reassign owned by ${r} to postgres; drop owned by ${r}; drop role ${r};`;
}

/**
 * Takes back what setup gave, when a connection is deleted: the role is dropped. What it owns is not
 * lost: the tables schema generation made in the user's schemas pass to the service user; the
 * `lockstep` change-capture schema passes to another Lockstep role that uses it (a member of this
 * one), or, when this was Lockstep's last role in the project, is dropped with its triggers.
 *
 * If the role cannot be dropped (it owns objects in another database, say), nothing of that is
 * done: it only loses its rights on `schemas` and its login. The one row answered says which:
 * `dropped` (true also when the role was already gone) and `problem` (why it stays).
 */
export function dropRoleSql(role: string, schemas: string[]): string {
  assertRole(role);
  const name = literal(role);
  const revokes = schemas
    .map(
      (schema) => `    if exists (select 1 from pg_namespace where nspname = ${literal(schema)}) then
      execute format('revoke all on all tables in schema %I from %I', ${literal(schema)}, ${name});
      execute format('revoke all on all sequences in schema %I from %I', ${literal(schema)}, ${name});
      execute format('revoke usage, create on schema %I from %I', ${literal(schema)}, ${name});
    end if;`,
    )
    .join('\n');
  return `do $lockstep$
declare
  gone oid := to_regrole(${name});
  heir text;
  item record;
begin
  perform set_config('lockstep.role_problem', '', true);
  if gone is null then return; end if;
  begin
    if exists (select 1 from pg_namespace where nspname = 'lockstep' and nspowner = gone) then
      select m.rolname into heir from pg_auth_members a join pg_roles m on m.oid = a.member
        where a.roleid = gone and m.rolname like 'lockstep\\_%' order by m.rolname limit 1;
      if heir is null then
        -- Lockstep's last role here: change capture goes, with the triggers on the synced tables.
        drop schema lockstep cascade;
      else
        execute format('alter schema lockstep owner to %I', heir);
        for item in select c.oid::regclass as obj from pg_class c
            where c.relnamespace = 'lockstep'::regnamespace and c.relowner = gone and c.relkind in ('r', 'p') loop
          execute format('alter table %s owner to %I', item.obj, heir);
        end loop;
        for item in select c.oid::regclass as obj from pg_class c
            where c.relnamespace = 'lockstep'::regnamespace and c.relowner = gone and c.relkind = 'S' loop
          execute format('alter sequence %s owner to %I', item.obj, heir);
        end loop;
        for item in select p.oid::regprocedure as obj from pg_proc p
            where p.pronamespace = 'lockstep'::regnamespace and p.proowner = gone loop
          execute format('alter function %s owner to %I', item.obj, heir);
        end loop;
        -- The other Lockstep roles reached the schema through this one: now through the heir.
        for item in select m.rolname from pg_auth_members a join pg_roles m on m.oid = a.member
            where a.roleid = gone and m.rolname like 'lockstep\\_%' and m.rolname <> heir loop
          execute format('grant %I to %I', heir, item.rolname);
        end loop;
        execute format('alter default privileges for role %I in schema lockstep grant insert on tables to public', heir);
        execute format('alter default privileges for role %I in schema lockstep grant usage on sequences to public', heir);
      end if;
    end if;
    execute format('reassign owned by %I to %I', ${name}, current_user);
    execute format('drop owned by %I', ${name});
    execute format('drop role %I', ${name});
  exception when others then
    perform set_config('lockstep.role_problem', sqlerrm, true);
${revokes}
    execute format('alter role %I nologin', ${name});
  end;
end
$lockstep$;
select to_regrole(${name}) is null as dropped, nullif(current_setting('lockstep.role_problem', true), '') as problem;`;
}
