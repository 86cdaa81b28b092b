/**
 * Supabase Management API simulator (https://api.supabase.com/api/v1-json), the parts Lockstep uses:
 *
 * - OAuth 2.0 authorization code with PKCE (S256): GET /v1/oauth/authorize redirects back with a code
 *   (or error=access_denied when the simulated user refuses); POST /v1/oauth/token (form or JSON,
 *   client credentials as Basic auth or in the body) answers 201 with access and refresh tokens.
 *   Refresh tokens are single-use (rotated). An OAuth grant covers one organization.
 * - Personal access tokens (`sbp_…`) that see every organization.
 * - GET /v1/organizations, GET /v1/projects, GET /v1/projects/{ref}, GET /v1/projects/{ref}/api-keys.
 * - POST /v1/projects/{ref}/database/query {query, parameters?, read_only?}: runs SQL as the service
 *   (the admin user of the backing database) and answers 201 with the rows of the last statement.
 *
 * Behind each project is a real PostgreSQL database (an admin URL per project ref). The project's
 * `database.host`/`database.port` point at a small proxy that accepts the database name `postgres`,
 * as Supabase does, and forwards to the backing database. Errors are `{"message": "..."}` with
 * 400/401/403/404/429; the rate limit is per user per minute (120 by default).
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

export type SupabaseOrganization = { id: string; name: string };
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
  oauthClients?: { clientId: string; clientSecret: string; redirectUris: string[] }[];
  clock?: Clock;
  /** Requests per minute per user; false switches the limit off. */
  rateLimit?: number | false;
  user?: { id: string; email: string };
};

type Project = {
  ref: string;
  name: string;
  organizationId: string;
  region: string;
  status: string;
  createdAt: string;
  databaseUrl: string;
  proxy: PgProxy;
  pool: pg.Pool;
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
  private readonly clients = new Map<string, { clientSecret: string; redirectUris: string[] }>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<string, RefreshToken>();
  private readonly rateLimit: number | false;
  private readonly hits = new Map<string, { window: number; count: number }>();

  constructor(private readonly options: SupabaseSimulatorOptions) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.rateLimit = options.rateLimit ?? RATE_LIMIT_PER_MINUTE;
    this.user = options.user ?? { id: 'user-sim-1', email: 'owner@supabase.test' };
    this.organizations = options.organizations ?? [{ id: 'simorg', name: 'Simulated Org' }];
    for (const c of options.oauthClients ?? [DEFAULT_CLIENT]) this.clients.set(c.clientId, c);
    this.tokens.add({ token: DEFAULT_PAT, scopes: ['all'], kind: 'pat', userId: this.user.id });
  }

  async start(): Promise<void> {
    for (const [ref, value] of Object.entries(this.options.projects)) {
      const p = typeof value === 'string' ? { databaseUrl: value } : value;
      const url = new URL(p.databaseUrl);
      const proxy = await startPgProxy({
        host: url.hostname,
        port: Number(url.port || 5432),
        database: decodeURIComponent(url.pathname.slice(1)) || 'postgres',
      });
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
      });
    }
  }

  async stop(): Promise<void> {
    for (const p of this.projects.values()) {
      await p.proxy.close();
      await p.pool.end();
    }
  }

  registerOAuthClient(client: { clientId: string; clientSecret: string; redirectUris: string[] }): void {
    this.clients.set(client.clientId, client);
  }

  /** A connection string for the project's database as Supabase shows it (through the proxy). */
  databaseAddress(ref: string): { host: string; port: number; database: string } {
    const p = this.projects.get(ref);
    if (!p) throw new Error(`no project ${ref}`);
    return { host: p.proxy.host, port: p.proxy.port, database: 'postgres' };
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

    if (parts[1] === 'organizations' && parts.length === 2 && req.method === 'GET') {
      return json(
        200,
        this.organizations.filter((o) => orgs.includes(o.id)).map((o) => ({ id: o.id, name: o.name })),
      );
    }
    if (parts[1] !== 'projects') return fail(404, 'Not found');
    if (parts.length === 2 && req.method === 'GET') {
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
    if (parts.length === 3 && req.method === 'GET') return json(200, this.toJson(project));
    if (parts.length === 4 && parts[3] === 'api-keys' && req.method === 'GET') {
      const key = (role: string) =>
        `sim.${Buffer.from(JSON.stringify({ ref: project.ref, role })).toString('base64url')}`;
      return json(200, [
        { name: 'anon', api_key: key('anon') },
        { name: 'service_role', api_key: key('service_role') },
      ]);
    }
    if (parts.length === 5 && parts[3] === 'database' && parts[4] === 'query' && req.method === 'POST') {
      return this.query(project, req.body);
    }
    return fail(404, 'Not found');
  }

  rateLimitResponse(): SimResponse {
    return fail(429, 'Too many requests. Please try again later.');
  }

  private toJson(p: Project) {
    return {
      id: p.ref,
      ref: p.ref,
      organization_id: p.organizationId,
      name: p.name,
      region: p.region,
      created_at: p.createdAt,
      status: p.status,
      database: {
        host: p.proxy.host,
        // Not in Supabase's answer (always 5432 there): the simulator's proxy listens elsewhere.
        port: p.proxy.port,
        version: '15.8.1.085',
        postgres_engine: '15',
        release_channel: 'ga',
      },
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
      const e = error as { code?: string; message?: string };
      return fail(
        400,
        `Failed to run sql query: ERROR:  ${e.code ?? 'XX000'}: ${e.message ?? String(error)}`,
      );
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
      scopes: ['all'],
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

export type SupabaseSimulator = {
  /** Point the connector's `https://api.supabase.com` here. */
  url: string;
  /** A personal access token that sees every organization. */
  token: string;
  /** The OAuth client registered by default. */
  client: typeof DEFAULT_CLIENT;
  state: SupabaseState;
  /** Where a project's database answers (host, port, database `postgres`). */
  databaseAddress: (ref: string) => { host: string; port: number; database: string };
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
