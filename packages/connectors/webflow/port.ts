/**
 * Webflow for the REST layer and the runtime. A connection holds an API token (`apiToken`: a site
 * token, sent as a bearer token; OAuth is not built yet) and optionally `publish` ('staged', the
 * default: written items wait for the next site publish; 'live': they are published after each write
 * batch). A base is a site the token reaches; its tables are the site's CMS collections, each table's
 * remote id the collection id. `publishSite` publishes a site (Webflow allows one a minute).
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

export type WebflowItems = Record<string, string>;

export type WebflowSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.webflow.com; the simulator in tests). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep, the plan's requests a minute. */
  client?: Pick<
    WebflowClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perMinute'
  >;
};

export function tokenOf(items: WebflowItems): string {
  const token = (items.apiToken ?? items.siteToken ?? items.accessToken ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no Webflow token',
      'Enter a Webflow site token (Site settings > Apps & integrations > API access).',
    );
  }
  return token;
}

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

export function createWebflowPort(settings: WebflowSettings = {}) {
  return {
    type: 'webflow' as const,
    /** The sites the token reaches: a cheap authenticated call. */
    async check(items: WebflowItems): Promise<{ accountEmail: string | null }> {
      publishModeOf(items);
      await webflowSites(clientFor(settings, items));
      return { accountEmail: null };
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
