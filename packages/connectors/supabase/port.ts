import { randomBytes } from 'node:crypto';
import { assertPostgresqlHostAllowed, type PgConnectionItems } from '../postgresql/connection';
import { postgresqlPort } from '../postgresql/port';
import { ConnectorError } from '../sdk/connector';
import { dropRoleByHandSql, dropRoleSql, listSchemasSql, roleSql, schemaGrantSql } from './database-access';
import {
  createManagementClient,
  requestSupabaseTokens,
  SUPABASE_API_URL,
  type SupabaseProject,
  type SupabaseTokens,
} from './management-api';

/**
 * Supabase for the REST layer. A connection holds the Management API tokens (OAuth, refreshed when
 * they are about to expire, or a personal access token). Choosing a base (`<project ref>:<schema>`)
 * sets up Lockstep's own database role in that project through the database/query endpoint; from
 * then on the connection is tied to that project, and data goes through PostgreSQL with the role.
 *
 * Connection items (all stored sealed; the secret ones never leave the server):
 * accessToken, refreshToken, tokenExpiresAt (epoch ms) — the Management API;
 * projectRef, projectName, roleName, schemas (JSON list), connectionString, ssl — the database.
 */
export type SupabaseItems = Record<string, string>;
/** Stores changed items (renewed tokens, a role just set up) on the connection. */
export type SaveItems = (items: SupabaseItems) => Promise<void>;

export type SupabaseSettings = {
  apiUrl?: string;
  clientId?: string;
  clientSecret?: string;
  /** Databases on private addresses (the simulator's) are refused unless allowed. */
  allowPrivateHosts?: boolean;
  /** TLS to the project's database: Supabase requires it; the simulator has none. */
  databaseSsl?: 'require' | 'disable';
  now?: () => number;
  maxRetryAfterMs?: number;
};

/** The items PostgreSQL needs to reach the project's database as Lockstep's role. */
export function supabaseDatabaseItems(items: SupabaseItems): PgConnectionItems {
  if (!items.connectionString) {
    throw new ConnectorError(
      'validation',
      'supabase connection has no database role yet',
      'Choose a Supabase project and schema first: Lockstep sets up its database access then.',
    );
  }
  return {
    connectionString: items.connectionString,
    // Supabase's certificates chain to Supabase's own root CA, which is not bundled yet: its TLS
    // still encrypts without checking the certificate (issue 18 item 9 stays open for it).
    ...(items.ssl === 'require'
      ? { ssl: 'no-verify' as const }
      : items.ssl === 'disable'
        ? { ssl: 'disable' as const }
        : {}),
  };
}

/** `<ref>:<schema>`, the remote id of a Supabase base. */
export function parseSupabaseBase(remoteId: string): { ref: string; schema: string } {
  const at = remoteId.indexOf(':');
  if (at <= 0 || at === remoteId.length - 1) {
    throw new ConnectorError(
      'validation',
      `not a Supabase base id: ${remoteId}`,
      'Choose a Supabase project and schema from the list.',
    );
  }
  return { ref: remoteId.slice(0, at), schema: remoteId.slice(at + 1) };
}

export const tokenItems = (tokens: SupabaseTokens, now: number): SupabaseItems => ({
  accessToken: tokens.access_token,
  refreshToken: tokens.refresh_token,
  tokenExpiresAt: String(now + tokens.expires_in * 1000),
});

const schemasOf = (items: SupabaseItems): string[] => {
  try {
    const parsed = JSON.parse(items.schemas ?? '[]') as unknown;
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
};

export function createSupabasePort(settings: SupabaseSettings = {}) {
  const now = settings.now ?? Date.now;
  const apiUrl = settings.apiUrl ?? SUPABASE_API_URL;

  function oauthSettings() {
    if (!settings.clientId || !settings.clientSecret) {
      throw new ConnectorError(
        'validation',
        'Supabase OAuth client is not configured',
        'Supabase sign-in is not set up on this server (LOCKSTEP_SUPABASE_CLIENT_ID and LOCKSTEP_SUPABASE_CLIENT_SECRET). Use a personal access token instead.',
      );
    }
    return { apiUrl, clientId: settings.clientId, clientSecret: settings.clientSecret };
  }

  /** A Management API session on a connection's items: renews the OAuth token when it is due. */
  function session(start: SupabaseItems, save?: SaveItems) {
    let items = { ...start };
    if (!items.accessToken) {
      throw new ConnectorError('auth_invalid', 'no Supabase access token', 'Connect Supabase first.');
    }
    const renew = async () => {
      if (!items.refreshToken) return false;
      const tokens = await requestSupabaseTokens(oauthSettings(), {
        grant_type: 'refresh_token',
        refresh_token: items.refreshToken,
      });
      items = { ...items, ...tokenItems(tokens, now()) };
      await save?.(items);
      return true;
    };
    const api = createManagementClient({
      apiUrl,
      accessToken: () => items.accessToken as string,
      ...(settings.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: settings.maxRetryAfterMs } : {}),
    });
    /** Runs a call with a fresh token; a 401 is answered by one refresh and one more try. */
    async function call<T>(fn: (client: typeof api) => Promise<T>): Promise<T> {
      if (items.refreshToken && Number(items.tokenExpiresAt ?? 0) - now() < 120_000) await renew();
      try {
        return await fn(api);
      } catch (error) {
        if (error instanceof ConnectorError && error.code === 'auth_invalid' && (await renew()))
          return fn(api);
        throw error;
      }
    }
    return {
      call,
      get items() {
        return items;
      },
      async update(next: SupabaseItems) {
        items = next;
        await save?.(items);
      },
    };
  }

  async function guardHost(items: SupabaseItems) {
    await assertPostgresqlHostAllowed(supabaseDatabaseItems(items), {
      allowPrivate: settings.allowPrivateHosts ?? false,
    });
  }

  /** Sets up (or extends to another schema) Lockstep's role in the project; returns the items to use. */
  async function ensureAccess(
    s: ReturnType<typeof session>,
    ref: string,
    schema: string,
    options: { resetPassword?: boolean } = {},
  ): Promise<SupabaseItems> {
    const items = s.items;
    if (items.projectRef && items.projectRef !== ref) {
      throw new ConnectorError(
        'validation',
        `connection is tied to project ${items.projectRef}`,
        `This Supabase connection is set up for the project "${items.projectName ?? items.projectRef}". Connect Supabase again to use another project.`,
      );
    }
    const known = schemasOf(items);
    if (items.projectRef === ref && items.connectionString && !options.resetPassword) {
      if (known.includes(schema)) return items;
      await s.call((api) => api.runQuery(ref, schemaGrantSql(items.roleName as string, schema)));
      const next = { ...items, schemas: JSON.stringify([...known, schema]) };
      await s.update(next);
      return next;
    }
    const project = await s.call((api) => api.getProject(ref));
    if (project.status !== 'ACTIVE_HEALTHY') {
      throw new ConnectorError(
        'validation',
        `project ${ref} is ${project.status}`,
        `The Supabase project "${project.name}" is not running (${project.status}). Restore it in Supabase, then try again.`,
      );
    }
    const role = items.roleName ?? `lockstep_${randomBytes(6).toString('hex')}`;
    const password = randomBytes(24).toString('base64url');
    const schemas = [...new Set([...known, schema])];
    await s.call((api) =>
      api.runQuery(ref, [roleSql(role, password), ...schemas.map((x) => schemaGrantSql(role, x))].join('\n')),
    );
    const next: SupabaseItems = {
      ...items,
      projectRef: ref,
      projectName: project.name,
      organizationId: project.organization_id,
      roleName: role,
      schemas: JSON.stringify(schemas),
      connectionString: databaseUrl(project, ref, role, password),
      ssl: settings.databaseSsl ?? 'require',
    };
    await s.update(next);
    return next;
  }

  async function projectsOf(s: ReturnType<typeof session>): Promise<SupabaseProject[]> {
    const projects = await s.call((api) => api.listProjects());
    const bound = s.items.projectRef;
    return projects.filter((p) => (bound ? (p.ref ?? p.id) === bound : true));
  }

  return {
    type: 'supabase' as const,

    /** Exchanges an authorization code (PKCE) for the connection items to store. */
    async exchangeCode(input: { code: string; codeVerifier: string; redirectUri?: string }) {
      const tokens = await requestSupabaseTokens(oauthSettings(), {
        grant_type: 'authorization_code',
        code: input.code,
        code_verifier: input.codeVerifier,
        ...(input.redirectUri ? { redirect_uri: input.redirectUri } : {}),
      });
      return tokenItems(tokens, now());
    },

    /** The Management API answers; the database role too, once it is set up. No account email is published. */
    async check(items: SupabaseItems, save?: SaveItems): Promise<{ accountEmail: string | null }> {
      const s = session(items, save);
      await s.call((api) => api.listOrganizations());
      if (s.items.connectionString) {
        await guardHost(s.items);
        await postgresqlPort.check(supabaseDatabaseItems(s.items));
      }
      return { accountEmail: null };
    },

    async listOrganizations(items: SupabaseItems, save?: SaveItems) {
      return session(items, save).call((api) => api.listOrganizations());
    },

    async listProjects(items: SupabaseItems, save?: SaveItems) {
      return projectsOf(session(items, save));
    },

    /** Each running project's schemas (Supabase's own left out), as `<ref>:<schema>`. */
    async listBases(items: SupabaseItems, save?: SaveItems) {
      const s = session(items, save);
      const projects = (await projectsOf(s)).filter((p) => p.status === 'ACTIVE_HEALTHY');
      const bases: { remoteId: string; name: string }[] = [];
      for (const p of projects) {
        const ref = p.ref ?? p.id;
        const rows = await s.call((api) =>
          api.runQuery<{ name: string }>(ref, listSchemasSql(), { readOnly: true }),
        );
        for (const r of rows) bases.push({ remoteId: `${ref}:${r.name}`, name: `${p.name} / ${r.name}` });
      }
      return bases;
    },

    /**
     * The connection is being deleted: Lockstep's role is dropped from the project (see
     * `dropRoleSql`; the data it made stays). Best effort: what is left for the user to remove by
     * hand comes back as a sentence to show, with the SQL to run; null when nothing is left.
     */
    async removeAccess(items: SupabaseItems, save?: SaveItems): Promise<{ leftBehind: string | null }> {
      const role = items.roleName;
      if (!items.projectRef || !role) return { leftBehind: null };
      const ref = items.projectRef;
      const project = `the Supabase project "${items.projectName ?? ref}"`;
      const byHand = `Remove it in Supabase's SQL editor: ${dropRoleByHandSql(role)}`;
      let answer: { dropped?: boolean; problem?: string | null } | undefined;
      try {
        const s = session(items, save);
        [answer] = await s.call((api) =>
          api.runQuery<{ dropped: boolean; problem: string | null }>(
            ref,
            dropRoleSql(role, schemasOf(items)),
          ),
        );
      } catch (error) {
        if (!(error instanceof ConnectorError)) throw error;
        return {
          leftBehind: `Lockstep could not remove its database role "${role}" from ${project} (${error.userFacingMessage}). ${byHand}`,
        };
      }
      if (answer?.dropped === true) return { leftBehind: null };
      return {
        leftBehind: `Lockstep's database role "${role}" in ${project} can no longer log in or reach your schemas, but it could not be dropped${answer?.problem ? ` (${answer.problem})` : ''}. ${byHand}`,
      };
    },

    /** Sets up database access for the chosen schema, then reads its tables as Lockstep's role. */
    async discoverSchema(items: SupabaseItems, baseRemoteId: string, save?: SaveItems) {
      const { ref, schema } = parseSupabaseBase(baseRemoteId);
      const s = session(items, save);
      let ready = await ensureAccess(s, ref, schema);
      await guardHost(ready);
      try {
        return await postgresqlPort.discoverSchema(supabaseDatabaseItems(ready), schema);
      } catch (error) {
        // The role's password was changed or the role dropped in Supabase: set it up again once.
        if (!(error instanceof ConnectorError) || error.code !== 'auth_invalid') throw error;
        ready = await ensureAccess(s, ref, schema, { resetPassword: true });
        return postgresqlPort.discoverSchema(supabaseDatabaseItems(ready), schema);
      }
    },
  };
}

export type SupabasePort = ReturnType<typeof createSupabasePort>;

function databaseUrl(project: SupabaseProject, ref: string, role: string, password: string): string {
  const host = project.database?.host ?? `db.${ref}.supabase.co`;
  const port = project.database?.port ?? 5432;
  const url = new URL('postgresql://localhost/postgres');
  url.hostname = host;
  url.port = String(port);
  url.username = role;
  url.password = password;
  return url.toString();
}
