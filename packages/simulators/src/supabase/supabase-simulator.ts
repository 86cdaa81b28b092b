/**
 * Supabase Management API simulator (https://api.supabase.com/api/v1-json), the parts Lockstep uses:
 *
 * - OAuth 2.0 authorization code with PKCE (S256): GET /v1/oauth/authorize redirects back with a code
 *   (or error=access_denied when the simulated user refuses); POST /v1/oauth/token (form or JSON,
 *   client credentials as Basic auth or in the body) answers 201 with access and refresh tokens.
 *   Refresh tokens are single-use (rotated). An OAuth grant covers one organization.
 * - Personal access tokens (`sbp_…`) that see every organization.
 * - GET /v1/organizations, GET /v1/projects, GET /v1/projects/{ref}, GET /v1/projects/{ref}/api-keys,
 *   GET /v1/projects/{ref}/config/database/pooler (Supavisor: host, port, user, pool mode).
 * - POST /v1/projects/{ref}/database/query {query, parameters?, read_only?}: runs SQL as the service
 *   (the admin user of the backing database) and answers 201 with the rows of the last statement;
 *   a failed statement answers 400 with PostgreSQL's error and its LINE lines, as Supabase does.
 * - Scopes as Supabase's published API description (supabase/cli, packages/api) declares them per
 *   call: OAuth tokens carry their app's scopes (organizations:read, projects:read, database:read,
 *   database:write) and a call outside them is a 403; personal access tokens act as the user. The
 *   user's role in the organization gates what the description's fine-grained permissions gate:
 *   a read-only member may list projects but not read one (project_admin_read) or run SQL.
 *
 * Behind each project is a real PostgreSQL database (an admin URL per project ref). As on Supabase,
 * a project's direct host `db.<ref>.supabase.co` is IPv6-only (a free project has no IPv4 address),
 * so from here it does not resolve; the shared pooler answers instead: a proxy that takes the user
 * `<role>.<project ref>` (Supavisor's tenant naming) and the database `postgres`, and forwards to the
 * project's backing database as `<role>`. With `directHost: true` the direct host is a proxy too
 * (and `database.host/port` name it). Errors are `{"message": "..."}` with 400/401/403/404/429; the
 * rate limit is per user per minute (120 by default).
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  bearerToken,
  type Clock,
  FaultInjector,
  json,
  RequestLog,
  type SimRequest,
  type SimResponse,
  startHttpServer,
  systemClock,
  TokenRegistry,
} from '../http.ts';
import { type PgProxy, startPgProxy } from './pg-proxy.ts';

export const ACCESS_TOKEN_TTL_S = 86_400;
export const RATE_LIMIT_PER_MINUTE = 120;
export const DEFAULT_PAT = 'sbp_simulator0000000000000000000000000000';
export const DEFAULT_CLIENT = {
  clientId: '00000000-0000-4000-8000-00000000c11e',
  clientSecret: 'sba_simulator_client_secret',
  redirectUris: [] as string[],
};

export type SupabaseOrganization = { id: string; name: string; slug?: string };
/** The scopes Supabase's OAuth apps may ask for, as the API description names them. */
export const OAUTH_SCOPES = [
  'organizations:read',
  'projects:read',
  'database:read',
  'database:write',
] as const;
/** The user's role in the organization (Supabase's access control). */
export type MemberRole = 'owner' | 'developer' | 'read_only';
export type SupabaseProjectOptions = {
  /** Admin URL of the PostgreSQL database standing in for the project's database. */
  databaseUrl: string;
  name?: string;
  organizationId?: string;
  region?: string;
  status?: string;
};
export type SupabaseSimulatorOptions = {
  /** Project ref → admin URL of its backing database (or more details). */
  projects: Record<string, string | SupabaseProjectOptions>;
  /** Defaults to one organization holding every project. */
  organizations?: SupabaseOrganization[];
  oauthClients?: { clientId: string; clientSecret: string; redirectUris: string[]; scopes?: string[] }[];
  clock?: Clock;
  /** Requests per minute per user; false switches the limit off. */
  rateLimit?: number | false;
  user?: { id: string; email: string };
  /** The user's role in every organization (default owner). */
  role?: MemberRole;
  /** Projects also answer on their direct host (a proxy) instead of an IPv6-only name. */
  directHost?: boolean;
};

type Project = {
  ref: string;
  name: string;
  organizationId: string;
  region: string;
  status: string;
  createdAt: string;
  databaseUrl: string;
  /** The direct host's proxy (only with `directHost`). */
  proxy: PgProxy | null;
  pool: pg.Pool;
  backing: { host: string; port: number; database: string };
};

type AuthCode = {
  clientId: string;
  redirectUri: string;
  challenge: string;
  organizationId: string;
  expiresAt: number;
  used: boolean;
};
type RefreshToken = { clientId: string; organizationId: string; used: boolean };

const fail = (status: number, message: string, extra: Record<string, unknown> = {}) =>
  json(status, { message, ...extra });

export class SupabaseState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly organizations: SupabaseOrganization[];
  readonly projects = new Map<string, Project>();
  readonly user: { id: string; email: string };
  /** What the simulated person answers on the consent screen. */
  consent: 'approve' | 'deny' = 'approve';
  role: MemberRole;
  /** The shared pooler (Supavisor) every project's database answers through. */
  pooler: PgProxy | null = null;
  private readonly clients = new Map<
    string,
    { clientSecret: string; redirectUris: string[]; scopes: string[] }
  >();
  private readonly codes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<string, RefreshToken>();
  private readonly rateLimit: number | false;
  private readonly hits = new Map<string, { window: number; count: number }>();

  constructor(private readonly options: SupabaseSimulatorOptions) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.rateLimit = options.rateLimit ?? RATE_LIMIT_PER_MINUTE;
    this.user = options.user ?? { id: 'user-sim-1', email: 'owner@supabase.test' };
    this.role = options.role ?? 'owner';
    this.organizations = options.organizations ?? [{ id: 'simorg', name: 'Simulated Org' }];
    for (const c of options.oauthClients ?? [DEFAULT_CLIENT]) this.registerOAuthClient(c);
    this.tokens.add({ token: DEFAULT_PAT, scopes: ['all'], kind: 'pat', userId: this.user.id });
  }

  async start(): Promise<void> {
    for (const [ref, value] of Object.entries(this.options.projects)) {
      const p = typeof value === 'string' ? { databaseUrl: value } : value;
      const url = new URL(p.databaseUrl);
      const backing = {
        host: url.hostname,
        port: Number(url.port || 5432),
        database: decodeURIComponent(url.pathname.slice(1)) || 'postgres',
      };
      const proxy = this.options.directHost ? await startPgProxy(backing) : null;
      const pool = new pg.Pool({ connectionString: p.databaseUrl, max: 2 });
      pool.on('error', () => {});
      this.projects.set(ref, {
        ref,
        name: p.name ?? ref,
        organizationId: p.organizationId ?? (this.organizations[0] as SupabaseOrganization).id,
        region: p.region ?? 'eu-central-1',
        status: p.status ?? 'ACTIVE_HEALTHY',
        createdAt: new Date(this.clock.now()).toISOString(),
        databaseUrl: p.databaseUrl,
        proxy,
        pool,
        backing,
      });
    }
    // Supavisor: `<role>.<ref>` picks the project; the role logs in to its database as itself.
    this.pooler = await startPgProxy((params) => {
      const user = params.get('user') ?? '';
      const dot = user.lastIndexOf('.');
      const project = dot > 0 ? this.projects.get(user.slice(dot + 1)) : undefined;
      if (!project || params.get('database') !== 'postgres') return null;
      return { ...project.backing, user: user.slice(0, dot) };
    });
  }

  async stop(): Promise<void> {
    for (const p of this.projects.values()) {
      await p.proxy?.close();
      await p.pool.end();
    }
    await this.pooler?.close();
  }

  registerOAuthClient(client: {
    clientId: string;
    clientSecret: string;
    redirectUris: string[];
    scopes?: string[];
  }): void {
    this.clients.set(client.clientId, { ...client, scopes: client.scopes ?? [...OAUTH_SCOPES] });
  }

  /**
   * Where the project's database answers from here: the direct host (with `directHost`) or the
   * pooler, whose user is `<role>.<ref>`.
   */
  databaseAddress(ref: string): { host: string; port: number; database: string; userSuffix: string } {
    const p = this.projects.get(ref);
    if (!p) throw new Error(`no project ${ref}`);
    if (p.proxy) return { host: p.proxy.host, port: p.proxy.port, database: 'postgres', userSuffix: '' };
    const pooler = this.pooler as PgProxy;
    return { host: pooler.host, port: pooler.port, database: 'postgres', userSuffix: `.${ref}` };
  }

  resetRateLimits(): void {
    this.hits.clear();
  }

  async handle(req: SimRequest): Promise<SimResponse> {
    const parts = req.path.split('/').filter(Boolean);
    if (parts[0] !== 'v1') return fail(404, 'Not found');
    if (parts[1] === 'oauth') {
      if (parts[2] === 'authorize' && req.method === 'GET') return this.authorize(req);
      if (parts[2] === 'token' && req.method === 'POST') return this.token(req);
      return fail(404, 'Not found');
    }
    const auth = this.tokens.check(bearerToken(req.headers));
    if (!auth.ok) return fail(401, 'Unauthorized');
    const info = auth.info;
    if (this.rateLimit !== false) {
      const window = Math.floor(this.clock.now() / 60_000);
      const hit = this.hits.get(info.userId);
      const count = hit && hit.window === window ? hit.count + 1 : 1;
      this.hits.set(info.userId, { window, count });
      if (count > this.rateLimit) return this.rateLimitResponse();
    }
    if (req.bodyInvalid) return fail(400, 'Invalid JSON body');
    const orgs = info.bases ?? this.organizations.map((o) => o.id);
    // An OAuth token answers only within its app's scopes; a personal token acts as the user.
    const lacks = (scope: string) =>
      info.kind === 'oauth' && !info.scopes.includes(scope)
        ? fail(403, `Your token does not have the required scope: ${scope}`)
        : null;
    const denied = fail(403, 'Your account does not have the necessary privileges to access this endpoint');

    if (parts[1] === 'organizations' && parts.length === 2 && req.method === 'GET') {
      return (
        lacks('organizations:read') ??
        json(
          200,
          this.organizations
            .filter((o) => orgs.includes(o.id))
            .map((o) => ({ id: o.id, slug: o.slug ?? o.id, name: o.name })),
        )
      );
    }
    if (parts[1] !== 'projects') return fail(404, 'Not found');
    if (parts.length === 2 && req.method === 'GET') {
      const missing = lacks('projects:read');
      if (missing) return missing;
      return json(
        200,
        [...this.projects.values()].filter((p) => orgs.includes(p.organizationId)).map((p) => this.toJson(p)),
      );
    }
    const project = this.projects.get(decodeURIComponent(parts[2] ?? ''));
    if (!project) return fail(404, 'Project not found');
    if (!orgs.includes(project.organizationId)) {
      return fail(403, 'Your account does not have the necessary privileges to access this endpoint');
    }
    if (parts.length === 3 && req.method === 'GET') {
      // project_admin_read: not a read-only member's.
      return lacks('projects:read') ?? (this.role === 'read_only' ? denied : json(200, this.toJson(project)));
    }
    if (parts.slice(3).join('/') === 'config/database/pooler' && req.method === 'GET') {
      return lacks('database:read') ?? json(200, [this.poolerJson(project)]);
    }
    if (parts.length === 4 && parts[3] === 'api-keys' && req.method === 'GET') {
      const key = (role: string) =>
        `sim.${Buffer.from(JSON.stringify({ ref: project.ref, role })).toString('base64url')}`;
      return json(200, [
        { name: 'anon', api_key: key('anon') },
        { name: 'service_role', api_key: key('service_role') },
      ]);
    }
    if (parts.length === 5 && parts[3] === 'database' && parts[4] === 'query' && req.method === 'POST') {
      const readOnly = (req.body as { read_only?: unknown } | null)?.read_only === true;
      // database:write runs anything; database:read only a read-only query.
      const missing = readOnly && !lacks('database:read') ? null : lacks('database:write');
      if (missing) return missing;
      if (this.role === 'read_only' && !readOnly) return denied;
      return this.query(project, req.body);
    }
    return fail(404, 'Not found');
  }

  rateLimitResponse(): SimResponse {
    return fail(429, 'Too many requests. Please try again later.');
  }

  private toJson(p: Project) {
    const org = this.organizations.find((o) => o.id === p.organizationId);
    return {
      id: p.ref,
      ref: p.ref,
      organization_id: p.organizationId,
      organization_slug: org?.slug ?? p.organizationId,
      name: p.name,
      region: p.region,
      created_at: p.createdAt,
      status: p.status,
      database: {
        host: p.proxy?.host ?? `db.${p.ref}.supabase.co`,
        // Not in Supabase's answer (always 5432 there): the simulator's direct proxy listens elsewhere.
        ...(p.proxy ? { port: p.proxy.port } : {}),
        version: '15.8.1.085',
        postgres_engine: '15',
        release_channel: 'ga',
      },
    };
  }

  /**
   * The pooler's settings as SupavisorConfigResponse. Supabase's shared pooler serves session mode
   * on port 5432 and transaction mode on 6543 of one host; the simulator's pooler listens on one
   * port, in session mode, and says so.
   */
  private poolerJson(p: Project) {
    const pooler = this.pooler as PgProxy;
    const connection = `postgresql://postgres.${p.ref}:[YOUR-PASSWORD]@${pooler.host}:${pooler.port}/postgres`;
    return {
      identifier: p.ref,
      database_type: 'PRIMARY',
      is_using_scram_auth: true,
      db_user: 'postgres',
      db_host: pooler.host,
      db_port: pooler.port,
      db_name: 'postgres',
      connection_string: connection,
      connectionString: connection,
      default_pool_size: 15,
      max_client_conn: 200,
      pool_mode: 'session',
    };
  }

  private async query(project: Project, body: unknown): Promise<SimResponse> {
    const b = (body ?? {}) as { query?: unknown; parameters?: unknown; read_only?: unknown };
    if (typeof b.query !== 'string' || b.query.trim() === '') return fail(400, 'query is required');
    if (project.status !== 'ACTIVE_HEALTHY') return fail(400, `Project is ${project.status.toLowerCase()}`);
    const client = await project.pool.connect();
    try {
      if (b.read_only === true) await client.query('begin read only');
      const params = Array.isArray(b.parameters) ? b.parameters : undefined;
      const result = params ? await client.query(b.query, params) : await client.query(b.query);
      if (b.read_only === true) await client.query('commit');
      const last = Array.isArray(result) ? result.at(-1) : result;
      return json(201, (last?.rows ?? []) as unknown[]);
    } catch (error) {
      if (b.read_only === true) await client.query('rollback').catch(() => {});
      const e = error as { code?: string; message?: string; position?: string };
      return fail(400, `Failed to run sql query: ${sqlErrorText(b.query, e)}`);
    } finally {
      client.release();
    }
  }

  private authorize(req: SimRequest): SimResponse {
    const q = req.query;
    const client = this.clients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client) return fail(400, 'Invalid client_id');
    if (!redirectUri || (client.redirectUris.length > 0 && !client.redirectUris.includes(redirectUri))) {
      return fail(400, 'Invalid redirect_uri');
    }
    const redirect = new URL(redirectUri);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    const back = (params: Record<string, string>): SimResponse => {
      for (const [k, v] of Object.entries(params)) redirect.searchParams.set(k, v);
      return { status: 302, headers: { location: redirect.toString() } };
    };
    if (q.get('response_type') !== 'code') {
      return back({ error: 'unsupported_response_type', error_description: 'response_type must be code' });
    }
    const challenge = q.get('code_challenge');
    const method = (q.get('code_challenge_method') ?? '').toUpperCase();
    if (!challenge || method !== 'S256') {
      return back({
        error: 'invalid_request',
        error_description: 'code_challenge with method S256 is required',
      });
    }
    if (this.consent === 'deny') {
      return back({ error: 'access_denied', error_description: 'The user denied the authorization request' });
    }
    const slug = q.get('organization_slug');
    const org = slug ? this.organizations.find((o) => o.id === slug) : this.organizations[0];
    if (!org) return back({ error: 'invalid_request', error_description: 'Unknown organization' });
    const code = randomBytes(20).toString('hex');
    this.codes.set(code, {
      clientId: q.get('client_id') as string,
      redirectUri,
      challenge,
      organizationId: org.id,
      expiresAt: this.clock.now() + 10 * 60_000,
      used: false,
    });
    return back({ code });
  }

  private token(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    let clientId = body.client_id;
    let clientSecret = body.client_secret;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (basic?.[1]) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    }
    const client = this.clients.get(clientId ?? '');
    if (!client || client.clientSecret !== clientSecret) {
      return fail(401, 'Invalid client credentials', { error: 'invalid_client' });
    }
    const grant = (message: string) => fail(400, message, { error: 'invalid_grant' });
    if (body.grant_type === 'authorization_code') {
      const code = this.codes.get(body.code ?? '');
      if (!code || code.used || this.clock.now() >= code.expiresAt || code.clientId !== clientId) {
        return grant('Invalid or expired authorization code');
      }
      if (body.redirect_uri !== undefined && body.redirect_uri !== code.redirectUri) {
        return grant('redirect_uri does not match');
      }
      const computed = createHash('sha256')
        .update(body.code_verifier ?? '')
        .digest('base64url');
      if (computed !== code.challenge) return grant('code_verifier does not match the code_challenge');
      code.used = true;
      return json(201, this.issue(code.clientId, code.organizationId));
    }
    if (body.grant_type === 'refresh_token') {
      const rt = this.refreshTokens.get(body.refresh_token ?? '');
      if (!rt || rt.used || rt.clientId !== clientId) return grant('Invalid refresh token');
      rt.used = true;
      return json(201, this.issue(rt.clientId, rt.organizationId));
    }
    return fail(400, 'grant_type must be authorization_code or refresh_token', {
      error: 'unsupported_grant_type',
    });
  }

  private issue(clientId: string, organizationId: string) {
    const access = `sbp_oauth_${randomBytes(20).toString('hex')}`;
    const refresh = randomBytes(24).toString('hex');
    this.tokens.add({
      token: access,
      scopes: this.clients.get(clientId)?.scopes ?? [...OAUTH_SCOPES],
      bases: [organizationId],
      kind: 'oauth',
      userId: this.user.id,
      expiresAt: this.clock.now() + ACCESS_TOKEN_TTL_S * 1000,
    });
    this.refreshTokens.set(refresh, { clientId, organizationId, used: false });
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: ACCESS_TOKEN_TTL_S,
      token_type: 'Bearer',
    };
  }
}

/**
 * PostgreSQL's error as psql prints it and Supabase passes it on: `ERROR:  <code>: <message>`, then
 * for an error with a position the LINE it is on and a caret under the spot.
 */
export function sqlErrorText(
  query: string,
  e: { code?: string; message?: string; position?: string },
): string {
  const head = `ERROR:  ${e.code ?? 'XX000'}: ${e.message ?? 'unknown error'}`;
  const at = Number(e.position);
  if (!Number.isInteger(at) || at < 1) return head;
  const before = query.slice(0, at - 1);
  const lineNo = before.split('\n').length;
  const line = query.split('\n')[lineNo - 1] ?? '';
  const column = before.length - before.lastIndexOf('\n') - 1;
  const prefix = `LINE ${lineNo}: `;
  return `${head}\n${prefix}${line}\n${' '.repeat(prefix.length + column)}^\n`;
}

export type SupabaseSimulator = {
  /** Point the connector's `https://api.supabase.com` here. */
  url: string;
  /** A personal access token that sees every organization. */
  token: string;
  /** The OAuth client registered by default. */
  client: typeof DEFAULT_CLIENT;
  state: SupabaseState;
  /** Where a project's database answers (host, port, database `postgres`, the pooler's user suffix). */
  databaseAddress: (ref: string) => { host: string; port: number; database: string; userSuffix: string };
  /**
   * Runs the consent step of the OAuth flow as a browser would: follows /v1/oauth/authorize and
   * returns the query of the redirect (code and state, or error).
   */
  authorize: (params: {
    redirectUri: string;
    codeChallenge: string;
    state?: string;
    clientId?: string;
    organizationSlug?: string;
  }) => Promise<URLSearchParams>;
  revokeToken: (token: string) => void;
  faults: FaultInjector;
  requestLog: RequestLog;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startSupabaseSimulator(options: SupabaseSimulatorOptions): Promise<SupabaseSimulator> {
  const state = new SupabaseState(options);
  await state.start();
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const server = await startHttpServer({
    handler: (req) => state.handle(req),
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => state.rateLimitResponse(),
  });
  return {
    url: server.url,
    token: DEFAULT_PAT,
    client: DEFAULT_CLIENT,
    state,
    databaseAddress: (ref) => state.databaseAddress(ref),
    async authorize(p) {
      const u = new URL(`${server.url}/v1/oauth/authorize`);
      u.searchParams.set('client_id', p.clientId ?? DEFAULT_CLIENT.clientId);
      u.searchParams.set('redirect_uri', p.redirectUri);
      u.searchParams.set('response_type', 'code');
      u.searchParams.set('code_challenge', p.codeChallenge);
      u.searchParams.set('code_challenge_method', 'S256');
      u.searchParams.set('state', p.state ?? 'state');
      if (p.organizationSlug) u.searchParams.set('organization_slug', p.organizationSlug);
      const res = await fetch(u, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (!location) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
      return new URL(location).searchParams;
    },
    revokeToken: (t) => state.tokens.revoke(t),
    faults,
    requestLog,
    clock: state.clock,
    close: async () => {
      await server.close();
      await state.stop();
    },
  };
}
