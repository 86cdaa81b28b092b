/**
 * Webflow for the REST layer and the runtime. A connection holds either a site token (`apiToken`,
 * sent as a bearer token) or the access token of sign in with Webflow (`accessToken`: this server's
 * Data Client app, OAuth authorization code flow without PKCE; Webflow's tokens neither expire nor
 * refresh, they last until revoked), and optionally `publish` ('staged', the default: written items
 * wait for the next site publish; 'live': they are published after each write batch). A base is a
 * site the token reaches; its tables are the site's CMS collections, each table's remote id the
 * collection id. `publishSite` publishes a site (Webflow allows one a minute).
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createWebflowClient,
  WEBFLOW_API_URL,
  type WebflowClient,
  type WebflowClientOptions,
  type WebflowSite,
  webflowSites,
} from './webflow-api';
import { createWebflowConnector, type WebflowConnector, type WebflowPublishMode } from './webflow-connector';
import { type WebflowCollection, webflowFields } from './webflow-values';
import { WEBFLOW_WEBHOOK_TRIGGERS, type WebflowWebhookSet, webflowWebhookSecrets } from './webhooks';

export type WebflowItems = Record<string, string>;

export type WebflowSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.webflow.com; the simulator in tests). */
  apiUrl?: string;
  /** This server's Webflow app (sign in with Webflow); without it Webflow connects with a site token only. */
  clientId?: string;
  clientSecret?: string;
  /** The host of Webflow's authorize page: https://webflow.com (the simulator in tests). */
  oauthUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep, the plan's requests a minute. */
  client?: Pick<
    WebflowClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perMinute'
  >;
};

export const WEBFLOW_OAUTH_URL = 'https://webflow.com';

/**
 * The scopes sign in with Webflow asks for: the sites (listed as bases; written to publish) and
 * their CMS read and write, and who authorized (the connection's name).
 */
export const WEBFLOW_OAUTH_SCOPES = [
  'sites:read',
  'sites:write',
  'cms:read',
  'cms:write',
  'authorized_user:read',
];

export function tokenOf(items: WebflowItems): string {
  const token = (items.apiToken ?? items.siteToken ?? items.accessToken ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no Webflow token',
      'Sign in with Webflow, or enter a Webflow site token (Site settings > Apps & integrations > API access).',
    );
  }
  return token;
}

/** A connection made by signing in with Webflow (an app's access token, not a site token). */
export const isWebflowOAuth = (items: WebflowItems) =>
  Boolean(items.accessToken?.trim()) && !items.apiToken?.trim() && !items.siteToken?.trim();

export function publishModeOf(items: WebflowItems): WebflowPublishMode {
  const mode = (items.publish ?? '').trim().toLowerCase();
  if (mode === '' || mode === 'staged') return 'staged';
  if (mode === 'live') return 'live';
  throw new ConnectorError(
    'validation',
    `bad Webflow publish mode ${mode}`,
    'Publishing must be "staged" (items wait for the next site publish) or "live" (published as they are written).',
  );
}

/** The app's API, or a `baseUrl` item the server honours (its Webflow sandbox, a local server). */
const apiUrlOf = (settings: WebflowSettings, items: WebflowItems) =>
  resolveApiUrl('Webflow', settings.apiUrl ?? WEBFLOW_API_URL, settings, items);

function clientFor(
  settings: WebflowSettings,
  items: WebflowItems,
  tuning: Partial<WebflowClientOptions> = {},
) {
  return createWebflowClient({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 10_500,
    maxAttempts: 3,
    ...settings.client,
    ...tuning,
  });
}

/** Discovery of one collection: its synced fields as canonical fields. */
export function webflowDiscoveredTable(collection: WebflowCollection) {
  const fields = webflowFields(collection);
  return {
    remoteId: collection.id,
    name: collection.displayName || collection.slug || collection.id,
    extras: {
      webflowCollectionSlug: collection.slug ?? null,
      singularName: collection.singularName ?? null,
      unsupportedFields: collection.fields
        .filter((f) => !fields.some((x) => x.remoteId === f.slug))
        .map((f) => `${f.slug} (${f.type})`),
    },
    fields,
  };
}

export type PublishSiteResult = {
  siteId: string;
  publishedTo: string[];
  queuedAt: string;
};

/** `POST /sites/{id}/publish` to the webflow.io subdomain and every custom domain of the site. */
export async function publishSiteWith(client: WebflowClient, siteId: string): Promise<PublishSiteResult> {
  const id = siteId.trim();
  if (!id)
    throw new ConnectorError('validation', 'no Webflow site id', 'Choose the Webflow site to publish.');
  const path = `/sites/${encodeURIComponent(id)}`;
  // The site's custom domains (Get Site lists them): the publish goes to each and to webflow.io.
  const { body: site } = await client.request<WebflowSite>({ method: 'GET', path });
  const domains = site?.customDomains ?? [];
  try {
    await client.request({
      method: 'POST',
      path: `${path}/publish`,
      body: { customDomains: domains.map((d) => d.id), publishToWebflowSubdomain: true },
      // A publish queued twice publishes twice: only a refused (429) one is sent again.
      idempotent: false,
    });
  } catch (error) {
    if (error instanceof ConnectorError && error.code === 'rate_limited') {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 60_000) / 1000));
      throw new ConnectorError(
        'rate_limited',
        error.message,
        `Webflow publishes a site at most once a minute. Try again in ${seconds} seconds.`,
        error.retryAfterMs,
      );
    }
    throw error;
  }
  return {
    siteId: id,
    publishedTo: ['webflow.io', ...domains.map((d) => d.url ?? d.id)],
    queuedAt: new Date().toISOString(),
  };
}

/**
 * POST /oauth/access_token on the API host (JSON: client_id, client_secret, code, grant_type
 * authorization_code, and redirect_uri when the authorize request had one) -> `{access_token,
 * token_type}`. Webflow documents no error body for it: whatever came back is kept for the log.
 */
async function requestWebflowToken(apiUrl: string, body: Record<string, string>) {
  let res: Response;
  try {
    res = await fetch(new URL('/oauth/access_token', apiUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Webflow token endpoint unreachable: ${(error as Error).message}`,
      'Webflow is not answering right now; please try again.',
    );
  }
  const text = await res.text();
  let answer: Record<string, unknown> = {};
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  if (res.ok && typeof answer.access_token === 'string') return answer.access_token;
  const error = typeof answer.error === 'string' ? answer.error : `HTTP ${res.status}`;
  const detail = String(answer.error_description ?? answer.message ?? text.slice(0, 200));
  throw new ConnectorError(
    res.status >= 500 ? 'transient' : error === 'invalid_client' ? 'auth_invalid' : 'validation',
    `Webflow token exchange failed: ${error}: ${detail}`.trim(),
    res.status >= 500
      ? 'Webflow is not answering right now; please try again.'
      : 'Webflow did not accept the authorization. Please sign in with Webflow again.',
  );
}

export function createWebflowPort(settings: WebflowSettings = {}) {
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'Webflow OAuth client is not configured',
        'Signing in with Webflow is not set up on this server (LOCKSTEP_WEBFLOW_CLIENT_ID and LOCKSTEP_WEBFLOW_CLIENT_SECRET). Use a site token instead.',
      );
    return { client_id: settings.clientId, client_secret: settings.clientSecret };
  };
  return {
    type: 'webflow' as const,
    /**
     * Webflow's authorize page for this server's app (webflow.com/oauth/authorize): the person
     * picks the sites (or workspace) to give and approves the scopes. Webflow takes no PKCE: the
     * state alone binds the answer to this sign-in.
     */
    authorizeUrl(input: { redirectUri: string; state: string }): string {
      const url = new URL('/oauth/authorize', settings.oauthUrl ?? WEBFLOW_OAUTH_URL);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', oauthClient().client_id);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('scope', WEBFLOW_OAUTH_SCOPES.join(' '));
      url.searchParams.set('state', input.state);
      return url.toString();
    },
    /** The code for an access token (no refresh token: Webflow's last until revoked). */
    async exchangeCode(input: { code: string; redirectUri: string }): Promise<WebflowItems> {
      const accessToken = await requestWebflowToken(settings.apiUrl ?? WEBFLOW_API_URL, {
        ...oauthClient(),
        code: input.code,
        grant_type: 'authorization_code',
        redirect_uri: input.redirectUri,
      });
      return { accessToken };
    },
    /**
     * The sites the token reaches: a cheap authenticated call. A signed-in connection is named
     * after the person who authorized it (GET /v2/token/authorized_by).
     */
    async check(items: WebflowItems): Promise<{ accountEmail: string | null }> {
      publishModeOf(items);
      const client = clientFor(settings, items);
      await webflowSites(client);
      if (!isWebflowOAuth(items)) return { accountEmail: null };
      try {
        const { body } = await client.request<{ email?: string }>({
          method: 'GET',
          path: '/token/authorized_by',
        });
        return { accountEmail: body.email ?? null };
      } catch (error) {
        // An app given without authorized_user:read still syncs: the name is only a nicety.
        if (error instanceof ConnectorError && error.code === 'permission_denied')
          return { accountEmail: null };
        throw error;
      }
    },
    /**
     * The site's webhooks to `notificationUrl`, one per item trigger (created, changed, deleted,
     * unpublished): kept when Webflow still has them (and, for site-token ones, their secret is
     * known), made otherwise (POST /v2/sites/{id}/webhooks); others to the same address are deleted.
     * Answers `known` itself when nothing changed.
     */
    async ensureWebhook(
      items: WebflowItems,
      siteId: string,
      notificationUrl: string,
      known: WebflowWebhookSet | null,
    ): Promise<WebflowWebhookSet> {
      const client = clientFor(settings, items);
      const path = `/sites/${encodeURIComponent(siteId)}/webhooks`;
      type Listed = { id: string; triggerType?: string; url?: string };
      const { body } = await client.request<{ webhooks?: Listed[] }>({ method: 'GET', path });
      const ours = (body.webhooks ?? []).filter((w) => w.url === notificationUrl);
      const same = known?.notificationUrl === notificationUrl;
      const knownIds = new Set(same ? (known?.id ?? '').split(',').filter(Boolean) : []);
      const knownSecrets = same ? webflowWebhookSecrets(known) : {};
      // An app's webhooks are signed with its client secret; a site token's each with its own.
      const appSigned = isWebflowOAuth(items);
      const ids: string[] = [];
      const secrets: Record<string, string> = {};
      for (const triggerType of WEBFLOW_WEBHOOK_TRIGGERS) {
        const kept = ours.find(
          (w) => knownIds.has(w.id) && w.triggerType === triggerType && (appSigned || knownSecrets[w.id]),
        );
        if (kept) {
          ids.push(kept.id);
          if (knownSecrets[kept.id]) secrets[kept.id] = knownSecrets[kept.id] as string;
          continue;
        }
        const { body: made } = await client.request<{ id: string; secretKey?: string }>({
          method: 'POST',
          path,
          body: { triggerType, url: notificationUrl },
          // A duplicate from a retried create is deleted at the next check.
          idempotent: false,
        });
        ids.push(made.id);
        if (made.secretKey) secrets[made.id] = made.secretKey;
      }
      for (const w of ours) {
        if (ids.includes(w.id)) continue;
        await client
          .request({ method: 'DELETE', path: `/webhooks/${encodeURIComponent(w.id)}` })
          .catch(() => undefined);
      }
      const hook: WebflowWebhookSet = {
        id: ids.join(','),
        notificationUrl,
        ...(Object.keys(secrets).length > 0 ? { secret: JSON.stringify(secrets) } : {}),
      };
      return known && JSON.stringify(hook) === JSON.stringify(known) ? known : hook;
    },
    /** One base per site the token reaches (a site token: its one site). */
    async listBases(items: WebflowItems) {
      const sites: WebflowSite[] = await webflowSites(clientFor(settings, items));
      return sites.map((s) => ({
        remoteId: s.id,
        name: s.displayName || s.shortName || `Webflow site ${s.id}`,
      }));
    },
    /** The site's CMS collections, each with its fields. */
    async discoverSchema(items: WebflowItems, siteId: string) {
      const client = clientFor(settings, items);
      const { body } = await client.request<{ collections?: WebflowCollection[] }>({
        method: 'GET',
        path: `/sites/${encodeURIComponent(siteId)}/collections`,
      });
      const tables = [];
      for (const listed of body.collections ?? []) {
        const { body: full } = await client.request<WebflowCollection>({
          method: 'GET',
          path: `/collections/${encodeURIComponent(listed.id)}`,
        });
        tables.push(webflowDiscoveredTable({ ...listed, ...full, fields: full.fields ?? [] }));
      }
      return tables;
    },
    /** Publishes the site (`POST /sites/{id}/publish`); Webflow allows one a minute. */
    async publishSite(items: WebflowItems, siteId: string): Promise<PublishSiteResult> {
      // Nothing to wait out: a refused publish is answered at once with how long to wait.
      return publishSiteWith(clientFor(settings, items, { maxAttempts: 1 }), siteId);
    },
  };
}

export type WebflowPort = ReturnType<typeof createWebflowPort>;

/** The connector a run uses for one connection (tables are collections). */
export function createWebflowRuntimeConnector(
  settings: WebflowSettings,
  items: WebflowItems,
): WebflowConnector {
  return createWebflowConnector({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    publish: publishModeOf(items),
    ...settings.client,
  });
}
