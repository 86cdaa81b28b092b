/**
 * HubSpot for the REST layer and the runtime. A connection holds either a private app token
 * (`accessToken` without a refresh token; for webhooks also the private app's `clientSecret`) or the
 * tokens of sign in with HubSpot, this server's OAuth app (`accessToken`, `refreshToken`, `hubId`):
 * HubSpot's access tokens last 30 minutes, so when HubSpot refuses one (401) it is renewed once with
 * the refresh token (POST /oauth/v1/token on the API host) and the renewed items handed to `save`.
 * HubSpot's refresh tokens do not rotate. The one base is the HubSpot account (portal) the token
 * belongs to; its tables are the CRM object types (`contacts`, `companies`, `deals`), each table's
 * remote id the type.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createHubSpotClient,
  HUBSPOT_API_URL,
  type HubSpotClientOptions,
  hubspotAccount,
} from './hubspot-api';
import {
  createHubSpotConnector,
  HUBSPOT_OBJECT_TYPES,
  type HubSpotConnector,
  type HubSpotProperty,
  hubspotFields,
} from './hubspot-connector';

export type HubSpotItems = Record<string, string>;

export type HubSpotSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.hubapi.com; the simulator in tests). */
  apiUrl?: string;
  /** This server's HubSpot app (sign in with HubSpot); without it HubSpot connects with a private app token only. */
  clientId?: string;
  clientSecret?: string;
  /** The host of HubSpot's install (authorize) page: https://app.hubspot.com (the simulator in tests). */
  oauthUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep, the burst limit of the account's tier. */
  client?: Pick<
    HubSpotClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perTenSeconds' | 'searchPerSecond'
  >;
  /** How often a type with associations is read whole again (15 minutes; shorter in tests). */
  associationSweepMs?: number;
};

const TABLE_NAMES: Record<string, string> = { contacts: 'Contacts', companies: 'Companies', deals: 'Deals' };

export const HUBSPOT_OAUTH_URL = 'https://app.hubspot.com';

/**
 * The scopes sign in with HubSpot asks for: the CRM objects Lockstep syncs, read and write, and their
 * properties (schemas) read; `oauth` is required of every HubSpot app.
 */
export const HUBSPOT_OAUTH_SCOPES = [
  'oauth',
  ...HUBSPOT_OBJECT_TYPES.flatMap((t) => [`crm.objects.${t}.read`, `crm.objects.${t}.write`]),
  ...HUBSPOT_OBJECT_TYPES.map((t) => `crm.schemas.${t}.read`),
];

export type SaveItems = (items: HubSpotItems) => Promise<void>;

function tokenOf(items: HubSpotItems): string {
  const token = (items.accessToken ?? items.privateAppToken ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no HubSpot token',
      'Sign in with HubSpot, or enter a HubSpot private app token (Settings > Integrations > Private apps).',
    );
  }
  return token;
}

type TokenAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; error: string; detail: string };

/**
 * POST /oauth/v1/token (form-encoded, the client's id and secret in the body). HubSpot answers
 * errors as `{status: "BAD_REFRESH_TOKEN" | "BAD_AUTH_CODE" | ..., message, correlationId}`.
 */
async function requestHubSpotTokens(apiUrl: string, form: Record<string, string>): Promise<TokenAnswer> {
  let res: Response;
  try {
    res = await fetch(new URL('/oauth/v1/token', apiUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `HubSpot token endpoint unreachable: ${(error as Error).message}`,
      'HubSpot is not answering right now; Lockstep will try again.',
    );
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof answer.access_token === 'string') return { ok: true, body: answer };
  return {
    ok: false,
    status: res.status,
    error: typeof answer.status === 'string' ? answer.status : `HTTP ${res.status}`,
    detail: String(answer.message ?? ''),
  };
}

/** The items a token answer gives (the refresh token stays when an answer has none). */
function tokenItems(body: Record<string, unknown>, now: number): HubSpotItems {
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: String(body.access_token),
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    ...(Number.isFinite(expiresIn)
      ? { accessTokenExpiresAt: new Date(now + expiresIn * 1000).toISOString() }
      : {}),
    ...(body.hub_id !== undefined && body.hub_id !== null ? { hubId: String(body.hub_id) } : {}),
  };
}

/**
 * A connection's credentials: the token to send and, for an OAuth connection, its renewal with the
 * refresh token when HubSpot refuses it (one renewal shared by the requests refused together; a
 * request refused with a token already renewed just tries again with the new one).
 */
export function hubspotSession(settings: HubSpotSettings, start: HubSpotItems, save?: SaveItems) {
  let items = start;
  let renewing: Promise<boolean> | null = null;
  const renew = async (refused?: string): Promise<boolean> => {
    if (!items.refreshToken) return false;
    if (refused !== undefined && refused !== items.accessToken) return true;
    if (!settings.clientId || !settings.clientSecret) return false;
    const client = { client_id: settings.clientId, client_secret: settings.clientSecret };
    renewing ??= (async () => {
      try {
        const answer = await requestHubSpotTokens(apiUrlOf(settings, items), {
          grant_type: 'refresh_token',
          ...client,
          refresh_token: items.refreshToken as string,
        });
        if (!answer.ok) {
          // BAD_REFRESH_TOKEN: the app was uninstalled or the token revoked; a person signs in again.
          const code =
            answer.status === 429 ? 'rate_limited' : answer.status >= 500 ? 'transient' : 'auth_invalid';
          throw new ConnectorError(
            code,
            `HubSpot token refresh failed: ${answer.error}: ${answer.detail}`.trim(),
            code === 'auth_invalid'
              ? 'HubSpot no longer accepts Lockstep’s sign-in. Sign in with HubSpot again.'
              : 'HubSpot is not answering right now; Lockstep will try again.',
          );
        }
        items = { ...items, ...tokenItems(answer.body, Date.now()) };
        await save?.(items);
        return true;
      } finally {
        renewing = null;
      }
    })();
    return renewing;
  };
  return {
    token: () => tokenOf(items),
    renew,
    get items() {
      return items;
    },
  };
}

/** The app's API, or a `baseUrl` item the server honours (its HubSpot sandbox, a local server). */
const apiUrlOf = (settings: HubSpotSettings, items: HubSpotItems) =>
  resolveApiUrl('HubSpot', settings.apiUrl ?? HUBSPOT_API_URL, settings, items);

function clientFor(settings: HubSpotSettings, items: HubSpotItems, save?: SaveItems) {
  tokenOf(items);
  const session = hubspotSession(settings, items, save);
  return createHubSpotClient({
    baseUrl: apiUrlOf(settings, items),
    token: session.token,
    onAuthFailure: session.renew,
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 10_500,
    maxAttempts: 3,
    ...settings.client,
  });
}

/** Discovery of one object type: its synced properties as canonical fields. */
export function hubspotDiscoveredTable(type: string, properties: HubSpotProperty[]) {
  return {
    remoteId: type,
    name: TABLE_NAMES[type] ?? type,
    extras: {
      hubspotObjectType: type,
      unsupportedFields: properties
        .filter((p) => !p.hidden && !p.archived && !hubspotFields([p]).length)
        .map((p) => p.name),
    },
    fields: hubspotFields(properties, type),
  };
}

export function createHubSpotPort(settings: HubSpotSettings = {}) {
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'HubSpot OAuth client is not configured',
        'Signing in with HubSpot is not set up on this server (LOCKSTEP_HUBSPOT_CLIENT_ID and LOCKSTEP_HUBSPOT_CLIENT_SECRET). Use a private app token instead.',
      );
    return { client_id: settings.clientId, client_secret: settings.clientSecret };
  };
  const apiUrl = settings.apiUrl ?? HUBSPOT_API_URL;
  return {
    type: 'hubspot' as const,
    /**
     * HubSpot's install page for this server's app (on app.hubspot.com): the person picks the
     * account and approves the scopes; PKCE (S256) binds the code to this sign-in.
     */
    authorizeUrl(input: { redirectUri: string; state: string; codeChallenge: string }): string {
      const url = new URL('/oauth/authorize', settings.oauthUrl ?? HUBSPOT_OAUTH_URL);
      url.searchParams.set('client_id', oauthClient().client_id);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('scope', HUBSPOT_OAUTH_SCOPES.join(' '));
      url.searchParams.set('state', input.state);
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      return url.toString();
    },
    /**
     * POST /oauth/v1/token (on the API host): the code for an access token (30 minutes) and a
     * refresh token; the account (hub id) from the answer, or from the token's metadata.
     */
    async exchangeCode(input: {
      code: string;
      codeVerifier: string;
      redirectUri: string;
    }): Promise<HubSpotItems> {
      const answer = await requestHubSpotTokens(apiUrl, {
        grant_type: 'authorization_code',
        ...oauthClient(),
        redirect_uri: input.redirectUri,
        code: input.code,
        code_verifier: input.codeVerifier,
      });
      if (!answer.ok)
        throw new ConnectorError(
          answer.status >= 500
            ? 'transient'
            : answer.error === 'BAD_CLIENT_ID' || answer.error === 'BAD_CLIENT_SECRET'
              ? 'auth_invalid'
              : 'validation',
          `${answer.error}: ${answer.detail}`,
          'HubSpot did not accept the authorization. Please sign in with HubSpot again.',
        );
      const items = tokenItems(answer.body, Date.now());
      if (!items.hubId) {
        const client = createHubSpotClient({
          baseUrl: apiUrl,
          token: items.accessToken as string,
          perTenSeconds: 0,
          maxAttempts: 3,
        });
        const { body } = await client.request<{ hub_id?: number }>({
          method: 'GET',
          path: `/oauth/v1/access-tokens/${encodeURIComponent(items.accessToken as string)}`,
        });
        if (body.hub_id !== undefined) items.hubId = String(body.hub_id);
      }
      return items;
    },
    /** The account the token belongs to: a cheap authenticated call. */
    async check(items: HubSpotItems, save?: SaveItems): Promise<{ accountEmail: string | null }> {
      await hubspotAccount(clientFor(settings, items, save));
      return { accountEmail: null };
    },
    /** One base: the HubSpot account (portal). */
    async listBases(items: HubSpotItems, save?: SaveItems) {
      const account = await hubspotAccount(clientFor(settings, items, save));
      return [{ remoteId: String(account.portalId), name: `HubSpot account ${account.portalId}` }];
    },
    /** Contacts, companies and deals; a type the token has no scope for is left out (all missing: refused). */
    async discoverSchema(items: HubSpotItems, _portalId: string, save?: SaveItems) {
      const client = clientFor(settings, items, save);
      const tables = [];
      let refused: ConnectorError | undefined;
      for (const type of HUBSPOT_OBJECT_TYPES) {
        try {
          const { body } = await client.request<{ results: HubSpotProperty[] }>({
            method: 'GET',
            path: `/crm/v3/properties/${type}`,
          });
          tables.push(hubspotDiscoveredTable(type, body.results));
        } catch (error) {
          if (error instanceof ConnectorError && error.code === 'permission_denied') {
            refused = error;
            continue;
          }
          throw error;
        }
      }
      if (tables.length === 0 && refused) throw refused;
      return tables;
    },
  };
}

export type HubSpotPort = ReturnType<typeof createHubSpotPort>;

/**
 * The connector a run uses for one connection (tables are object types); an OAuth access token it
 * renews goes to `save`.
 */
export function createHubSpotRuntimeConnector(
  settings: HubSpotSettings,
  items: HubSpotItems,
  save?: SaveItems,
): HubSpotConnector {
  tokenOf(items);
  const session = hubspotSession(settings, items, save);
  return createHubSpotConnector({
    baseUrl: apiUrlOf(settings, items),
    token: session.token,
    onAuthFailure: session.renew,
    pool: settings.pool ?? null,
    ...settings.client,
    ...(settings.associationSweepMs !== undefined ? { associationSweepMs: settings.associationSweepMs } : {}),
  });
}
