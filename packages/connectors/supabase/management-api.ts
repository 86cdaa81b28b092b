import { ConnectorError, type ConnectorErrorCode } from '../sdk/connector';
import { defaultHttpErrorCode, HttpClient } from '../sdk/http-client';

/** Supabase's Management API (https://api.supabase.com/api/v1-json): the calls Lockstep makes. */
export const SUPABASE_API_URL = 'https://api.supabase.com';

export type SupabaseOrganization = { id: string; name: string; slug?: string };
export type SupabaseProject = {
  id: string;
  ref?: string;
  name: string;
  organization_id: string;
  organization_slug?: string;
  region: string;
  status: string;
  database?: { host?: string; port?: number; version?: string };
};
/** One entry of GET /v1/projects/{ref}/config/database/pooler (SupavisorConfigResponse). */
export type SupabasePoolerConfig = {
  identifier: string;
  database_type: 'PRIMARY' | 'READ_REPLICA';
  db_user: string;
  db_host: string;
  db_port: number;
  db_name: string;
  pool_mode: 'transaction' | 'session';
};
export type SupabaseTokens = {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
};

const USER_TEXT: Partial<Record<ConnectorErrorCode, string>> = {
  auth_invalid: 'Supabase refused the authorization. Connect Supabase again.',
  rate_limited: 'Supabase asked Lockstep to slow down (120 requests a minute). Try again in a minute.',
  transient: 'Supabase did not answer properly. Try again shortly.',
};

/** Supabase answers errors as {"message": "..."}; the message goes into the user-facing text. */
export function mapSupabaseError(status: number, body: unknown): ConnectorError {
  const code = defaultHttpErrorCode(status);
  const message =
    body && typeof body === 'object' && 'message' in body && typeof body.message === 'string'
      ? body.message
      : typeof body === 'string'
        ? body
        : JSON.stringify(body);
  const text =
    USER_TEXT[code] ??
    (code === 'permission_denied'
      ? `Your Supabase account may not do this: ${message}`
      : code === 'not_found'
        ? `Supabase could not find it: ${message}`
        : `Supabase refused the request: ${message}`);
  return new ConnectorError(code, `Supabase ${status}: ${message}`, text);
}

export type ManagementClientOptions = {
  apiUrl?: string;
  /** Called per request, so a refreshed token is used at once. */
  accessToken: () => string;
  maxAttempts?: number;
  /** A 429 with a longer wait than this is not slept through (default 5 s: a person is waiting). */
  maxRetryAfterMs?: number;
  sleep?: (ms: number) => Promise<void>;
};

export function createManagementClient(options: ManagementClientOptions) {
  const http = new HttpClient({
    baseUrl: options.apiUrl ?? SUPABASE_API_URL,
    headers: () => ({ authorization: `Bearer ${options.accessToken()}` }),
    maxAttempts: options.maxAttempts ?? 3,
    baseDelayMs: 200,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 5_000,
    // Supabase blocks the rest of the minute after the limit, without a Retry-After.
    defaultRetryAfterMs: 60_000,
    timeoutMs: 30_000,
    mapError: (status, body) => mapSupabaseError(status, body),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return {
    http,
    listOrganizations: async () =>
      (await http.request<SupabaseOrganization[]>({ method: 'GET', path: '/v1/organizations' })).body,
    listProjects: async () =>
      (await http.request<SupabaseProject[]>({ method: 'GET', path: '/v1/projects' })).body,
    getProject: async (ref: string) =>
      (
        await http.request<SupabaseProject>({
          method: 'GET',
          path: `/v1/projects/${encodeURIComponent(ref)}`,
        })
      ).body,
    getPoolerConfig: async (ref: string) =>
      (
        await http.request<SupabasePoolerConfig[]>({
          method: 'GET',
          path: `/v1/projects/${encodeURIComponent(ref)}/config/database/pooler`,
        })
      ).body,
    /** Runs SQL as the project's service user; the rows of the last statement come back. */
    runQuery: async <T = Record<string, unknown>>(
      ref: string,
      query: string,
      options: { readOnly?: boolean } = {},
    ): Promise<T[]> =>
      (
        await http.request<T[]>({
          method: 'POST',
          path: `/v1/projects/${encodeURIComponent(ref)}/database/query`,
          body: { query, ...(options.readOnly ? { read_only: true } : {}) },
          // A read is safe to send twice; the setup statements are written to be repeatable too.
          idempotent: true,
        })
      ).body,
  };
}

export type ManagementClient = ReturnType<typeof createManagementClient>;

export type OAuthClientSettings = {
  apiUrl?: string;
  clientId: string;
  clientSecret: string;
  fetch?: typeof fetch;
};

/** The URL a person is sent to for consent (authorization code with PKCE, S256). */
export function supabaseAuthorizeUrl(
  settings: { apiUrl?: string; clientId: string },
  params: { redirectUri: string; state: string; codeChallenge: string; organizationSlug?: string },
): string {
  const url = new URL('/v1/oauth/authorize', settings.apiUrl ?? SUPABASE_API_URL);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', params.state);
  url.searchParams.set('code_challenge', params.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (params.organizationSlug) url.searchParams.set('organization_slug', params.organizationSlug);
  return url.toString();
}

/**
 * POST /v1/oauth/token (form-encoded, client credentials as Basic auth). An OAuth error answer
 * becomes a ConnectorError whose message starts with the OAuth error code (e.g. `access_denied`).
 */
export async function requestSupabaseTokens(
  settings: OAuthClientSettings,
  grant:
    | { grant_type: 'authorization_code'; code: string; code_verifier: string; redirect_uri?: string }
    | { grant_type: 'refresh_token'; refresh_token: string },
): Promise<SupabaseTokens> {
  const doFetch = settings.fetch ?? fetch;
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(grant)) if (v !== undefined) form.set(k, v);
  let res: Response;
  try {
    res = await doFetch(new URL('/v1/oauth/token', settings.apiUrl ?? SUPABASE_API_URL), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`).toString('base64')}`,
      },
      body: form.toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Supabase token endpoint: ${error instanceof Error ? error.message : String(error)}`,
      'Supabase could not be reached. Try again shortly.',
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { message: text };
  }
  if (res.ok && typeof body.access_token === 'string') return body as unknown as SupabaseTokens;
  const oauthError = typeof body.error === 'string' ? body.error : null;
  const message = String(body.error_description ?? body.message ?? `HTTP ${res.status}`);
  if (oauthError === 'access_denied') {
    throw new ConnectorError(
      'permission_denied',
      `access_denied: ${message}`,
      'Supabase authorization was denied.',
    );
  }
  if (res.status === 400 || res.status === 401) {
    throw new ConnectorError(
      'auth_invalid',
      `${oauthError ?? 'oauth_error'}: ${message}`,
      grant.grant_type === 'refresh_token'
        ? 'Supabase no longer accepts this connection. Connect Supabase again.'
        : 'Supabase did not accept the authorization (it may have expired). Connect Supabase again.',
    );
  }
  throw mapSupabaseError(res.status, body);
}
