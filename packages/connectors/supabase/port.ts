import { randomBytes } from 'node:crypto';
import {
  assertPostgresqlHostAllowed,
  type PgConnectionItems,
  type PgErrorOptions,
} from '../postgresql/connection';
import { createPostgresqlPort } from '../postgresql/port';
import { ConnectorError } from '../sdk/connector';
import { dropRoleByHandSql, dropRoleSql, listSchemasSql, roleSql, schemaGrantSql } from './database-access';
import {
  createManagementClient,
  requestSupabaseTokens,
  SUPABASE_API_URL,
  type SupabasePoolerConfig,
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
 * projectRef, projectName, roleName, schemas (JSON list), connectionString — the database;
 * ssl, sslRootCert — TLS to the database, which the user may set (see supabaseDatabaseItems).
 */
export type SupabaseItems = Record<string, string>;
/** Stores changed items (renewed tokens, a role just set up) on the connection. */
export type SaveItems = (items: SupabaseItems) => Promise<void>;

/** What the server adds to every Supabase connection's TLS: Supabase's root CA, when the operator gave it. */
export type SupabaseTls = {
  /** PEM (LOCKSTEP_SUPABASE_ROOT_CA): certificates may chain to it, beside the system's CAs. */
  rootCa?: string | undefined;
};

export type SupabaseSettings = SupabaseTls & {
  apiUrl?: string;
  clientId?: string;
  clientSecret?: string;
  /** Databases on private addresses (the simulator's) are refused unless allowed. */
  allowPrivateHosts?: boolean;
  /** TLS to the project's database: verified; `disable` only for the simulator, which has none. */
  databaseSsl?: 'require' | 'disable';
  now?: () => number;
  maxRetryAfterMs?: number;
};

/**
 * What to do when a Supabase database's certificate does not check out. Supabase's certificates
 * chain to Supabase's own root CA ("Supabase Root 2021 CA"), which is in no system's trust store.
 */
export const supabaseCertificateAdvice = (reason: string) =>
  `The Supabase database's TLS certificate could not be verified (${reason}). Supabase's certificates chain to Supabase's own root CA: download it in the Supabase dashboard (Project Settings > Database > SSL Configuration > Download certificate) and paste it into this connection's "CA certificate" field, or ask this server's administrator to set LOCKSTEP_SUPABASE_ROOT_CA to that file for every Supabase connection. Or choose "Encrypt without checking the certificate" (no-verify) for this connection's TLS, which is not safe on networks you do not control.`;

/** How the PostgreSQL side tells Supabase's errors (the certificate advice above). */
export const SUPABASE_DATABASE_ERRORS: PgErrorOptions = { certificateAdvice: supabaseCertificateAdvice };

/**
 * The items PostgreSQL needs to reach the project's database as Lockstep's role. TLS verifies the
 * certificate and host name (`verify-full`) against the system's CAs, the operator's Supabase root
 * CA (`tls.rootCa`) and the connection's own `sslRootCert`, whatever `ssl` says (connections stored
 * with `require` before it verified included), except `no-verify`: the labelled opt-out,
 * "Encrypt without checking the certificate". `disable` is only stored for the simulator.
 */
export function supabaseDatabaseItems(items: SupabaseItems, tls: SupabaseTls = {}): PgConnectionItems {
  if (!items.connectionString) {
    throw new ConnectorError(
      'validation',
      'supabase connection has no database role yet',
      'Choose a Supabase project and schema first: Lockstep sets up its database access then.',
    );
  }
  const connectionString = items.connectionString;
  if (items.ssl === 'disable') return { connectionString, ssl: 'disable' };
  if (items.ssl === 'no-verify') return { connectionString, ssl: 'no-verify' };
  const roots = [tls.rootCa, items.sslRootCert]
    .map((pem) => pem?.trim())
    .filter(Boolean)
    .join('\n');
  return { connectionString, ssl: 'verify-full', ...(roots ? { sslRootCert: roots } : {}) };
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
  const postgresqlPort = createPostgresqlPort({}, SUPABASE_DATABASE_ERRORS);
  const databaseItems = (items: SupabaseItems) => supabaseDatabaseItems(items, settings);
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
    await assertPostgresqlHostAllowed(databaseItems(items), {
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
      // Set up before Lockstep used the pooler: the same role and password, through the pooler now.
      if (isDirectHost(items.connectionString)) {
        const pooler = await poolerOf(s, ref);
        if (pooler) {
          const stored = new URL(items.connectionString);
          const role = decodeURIComponent(stored.username);
          const password = decodeURIComponent(stored.password);
          await s.update({ ...items, connectionString: databaseUrl(ref, role, password, pooler) });
          return ensureAccess(s, ref, schema);
        }
      }
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
    const pooler = await poolerOf(s, ref);
    const next: SupabaseItems = {
      ...items,
      projectRef: ref,
      projectName: project.name,
      organizationId: project.organization_id,
      roleName: role,
      schemas: JSON.stringify(schemas),
      connectionString: databaseUrl(ref, role, password, pooler, project.database),
      // The simulator has no TLS; otherwise verified unless the user chose the opt-out.
      ssl:
        settings.databaseSsl === 'disable'
          ? 'disable'
          : items.ssl === 'no-verify'
            ? 'no-verify'
            : 'verify-full',
    };
    await s.update(next);
    return next;
  }

  /** The project's primary pooler, or null where the API has none for it. */
  async function poolerOf(s: ReturnType<typeof session>, ref: string): Promise<SupabasePoolerConfig | null> {
    try {
      const configs = await s.call((api) => api.getPoolerConfig(ref));
      return configs.find((c) => c.database_type === 'PRIMARY') ?? null;
    } catch (error) {
      if (error instanceof ConnectorError && error.code === 'not_found') return null;
      throw error;
    }
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
        await postgresqlPort.check(databaseItems(s.items));
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
        return await postgresqlPort.discoverSchema(databaseItems(ready), schema);
      } catch (error) {
        // The role's password was changed or the role dropped in Supabase: set it up again once.
        if (!(error instanceof ConnectorError) || error.code !== 'auth_invalid') throw error;
        ready = await ensureAccess(s, ref, schema, { resetPassword: true });
        return postgresqlPort.discoverSchema(databaseItems(ready), schema);
      }
    },
  };
}

export type SupabasePort = ReturnType<typeof createSupabasePort>;

/** Supabase's shared pooler serves session mode on this port of its host (transaction mode on 6543). */
export const POOLER_SESSION_PORT = 5432;

/**
 * Where Lockstep's role reaches the project's database: through the shared pooler (Supavisor) in
 * session mode, which keeps LISTEN and prepared statements. The project's direct host
 * (`db.<ref>.supabase.co`) is IPv6-only unless the project pays for an IPv4 address, so a server on
 * an IPv4 network could set its role up and then never connect. The pooler names the project in
 * the user (`<role>.<ref>`). Without a pooler answer (an old project, a self-hosted API), the direct
 * host it is.
 */
function databaseUrl(
  ref: string,
  role: string,
  password: string,
  pooler: SupabasePoolerConfig | null,
  direct?: SupabaseProject['database'],
): string {
  const url = new URL('postgresql://localhost/postgres');
  if (pooler) {
    url.hostname = pooler.db_host;
    url.port = String(pooler.pool_mode === 'session' ? pooler.db_port : POOLER_SESSION_PORT);
    url.pathname = `/${pooler.db_name || 'postgres'}`;
    url.username = `${role}.${ref}`;
  } else {
    url.hostname = direct?.host ?? `db.${ref}.supabase.co`;
    url.port = String(direct?.port ?? 5432);
    url.username = role;
  }
  url.password = password;
  return url.toString();
}

/** A connection string to the direct host that Lockstep set up before it used the pooler. */
const isDirectHost = (connectionString: string | undefined) => {
  if (!connectionString) return false;
  try {
    return /^db\.[^.]+\.supabase\.co$/i.test(new URL(connectionString).hostname);
  } catch {
    return false;
  }
};
