export { type Detail, FIELD_TYPES, type FieldDef, type FieldType, MAX_IMAGE_BYTES } from './fields.ts';
export {
  type ChangeSource,
  type Collection,
  type Item,
  type ItemEvent,
  type ItemInput,
  MAX_BULK_ITEMS,
  type Site,
  WebflowApiError,
  WebflowState,
  type WebflowStateOptions,
} from './model.ts';
export { CODE_TTL_MS, type OAuthApp, type WebflowUser } from './oauth.ts';
export { DEFAULT_PER_MINUTE, type RateLimitOptions } from './rate-limit.ts';
export { MAX_PAGE_SIZE, startWebflowServer, type WebflowServerOptions } from './routes.ts';
export { type CrmSeed as WebflowCrmSeed, type SeedCounts, seedCrm as seedWebflowCrm } from './seed.ts';
export {
  MAX_RETRIES,
  TRIGGER_TYPES,
  type WebhookDelivery,
  type WebhookOptions,
  type WebhookRegistration,
  webflowSignature,
} from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  type ChangeSource,
  type Item,
  type ItemInput,
  WebflowState,
  type WebflowStateOptions,
} from './model.ts';
import { type OAuthApp, OAuthServer } from './oauth.ts';
import type { RateLimiter } from './rate-limit.ts';
import { startWebflowServer, type WebflowServerOptions } from './routes.ts';
import { type CrmSeed, type SeedCounts, seedCrm } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** A site token with every scope the simulator knows, for the seeded site. */
export const DEFAULT_TOKEN = 'f3c0a1b2d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d';

export const ALL_SCOPES = ['sites:read', 'sites:write', 'cms:read', 'cms:write'];
/** What an OAuth app may ask for: the site scopes and `authorized_user:read` (who authorized it). */
export const APP_SCOPES = [...ALL_SCOPES, 'authorized_user:read'];

/** The OAuth app registered unless `oauthApps` is given. */
export const DEFAULT_OAUTH_APP: Required<OAuthApp> = {
  clientId: '6a1e0c4b2f8d3e7a9c5b1d0f2e4a6c8b0d2f4e6a8c0b2d4f6e8a0c2b4d6f8e0a',
  clientSecret: 'b7d9f1e3c5a7092b4d6f8e0a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d0f2a4c6e',
  redirectUri: 'http://127.0.0.1/oauth/callback',
  scopes: APP_SCOPES,
  displayName: 'Simulated App',
};

export type StartWebflowSimulatorOptions = WebflowStateOptions &
  WebflowServerOptions & {
    /** Seed the CRM site (default true); counts can be given. Without a seed, an empty site is made. */
    seed?: boolean | SeedCounts;
    /**
     * Extra tokens: site tokens (`kind: 'site'`, the default) or OAuth access tokens of an app
     * (`kind: 'oauth'`, `clientId`). `siteIds` defaults to every site; `scopes` to all four.
     */
    tokens?: {
      token: string;
      scopes?: string[];
      siteIds?: string[];
      kind?: 'site' | 'oauth';
      clientId?: string;
      expiresAt?: number;
    }[];
    /** Register DEFAULT_TOKEN (default true). */
    defaultToken?: boolean;
    /** OAuth apps (default: DEFAULT_OAUTH_APP). */
    oauthApps?: OAuthApp[];
    /** How webhook deliveries are sent. */
    webhooks?: WebhookOptions;
  };

type AppOptions = { skipInvalidFiles?: boolean };

export type WebflowSimulator = {
  /** The origin; the Data API is under `${url}/v2` (the official client's `baseUrl`). */
  url: string;
  token: string;
  crm: CrmSeed | undefined;
  siteId: string;
  state: WebflowState;
  /** Edits "in Webflow" (the Designer/CMS UI), with the same rules and webhooks as API writes. */
  create: (
    collectionId: string,
    fieldData: Record<string, unknown>,
    options?: AppOptions & ItemInput,
  ) => Item;
  update: (
    collectionId: string,
    itemId: string,
    fieldData: Record<string, unknown>,
    options?: AppOptions & Omit<ItemInput, 'fieldData'>,
  ) => Item;
  remove: (collectionId: string, itemId: string) => void;
  publish: (collectionId: string, itemIds: string[]) => void;
  unpublish: (collectionId: string, itemIds: string[]) => void;
  publishSite: (siteId?: string) => void;
  /** Tell the simulator how big the file at a public URL is (unknown URLs are 150 kB). */
  setRemoteFile: (url: string, bytes: number) => void;
  revokeToken: (token: string) => void;
  oauth: OAuthServer;
  webhooks: WebhookDispatcher;
  /** Resolves once every webhook delivery so far has been made. */
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startWebflowSimulator(
  options: StartWebflowSimulatorOptions = {},
): Promise<WebflowSimulator> {
  const state = new WebflowState(options);
  const crm =
    options.seed === false ? undefined : seedCrm(state, typeof options.seed === 'object' ? options.seed : {});
  const siteId = crm?.siteId ?? state.addSite({ displayName: 'Empty Site', shortName: 'empty-site' }).id;
  const allSites = () => [...state.sites.keys()];

  const oauth = new OAuthServer(state, APP_SCOPES, allSites);
  for (const app of options.oauthApps ?? [DEFAULT_OAUTH_APP]) oauth.addApp(app);

  if (options.defaultToken !== false) {
    state.tokens.add({
      token: DEFAULT_TOKEN,
      scopes: [...ALL_SCOPES],
      bases: [siteId],
      kind: 'pat',
      userId: 'site',
    });
  }
  for (const t of options.tokens ?? []) {
    state.tokens.add({
      token: t.token,
      scopes: t.scopes ?? [...ALL_SCOPES],
      bases: t.siteIds ?? allSites(),
      kind: t.kind === 'oauth' ? 'oauth' : 'pat',
      userId: 'site',
      ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
    });
    if (t.kind === 'oauth') oauth.bindToken(t.token, t.clientId ?? DEFAULT_OAUTH_APP.clientId);
  }

  // Attached after seeding: the seed is history, not news.
  const webhooks = new WebhookDispatcher(state.clock, options.webhooks);
  state.onChange((e) => webhooks.handle(e));
  const server = await startWebflowServer(state, oauth, webhooks, options);
  const app: ChangeSource = 'app';

  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    crm,
    siteId,
    state,
    create: (collectionId, fieldData, o = {}) => {
      const { skipInvalidFiles, ...input } = o;
      const [item] = state.createItems(collectionId, [{ ...input, fieldData }], {
        source: app,
        skipInvalidFiles: skipInvalidFiles ?? true,
      });
      return item as Item;
    },
    update: (collectionId, itemId, fieldData, o = {}) => {
      const { skipInvalidFiles, ...input } = o;
      const [item] = state.updateItems(collectionId, [{ ...input, fieldData, id: itemId }], {
        source: app,
        skipInvalidFiles: skipInvalidFiles ?? true,
      });
      return item as Item;
    },
    remove: (collectionId, itemId) => state.deleteItems(collectionId, [itemId], app),
    publish: (collectionId, itemIds) => {
      state.publishItems(collectionId, itemIds, app);
    },
    unpublish: (collectionId, itemIds) => state.unpublishItems(collectionId, itemIds, app),
    publishSite: (id = siteId) => state.publishSite(id, app),
    setRemoteFile: (url, bytes) => state.remoteFiles.set(url, bytes),
    revokeToken: (t) => state.tokens.revoke(t),
    oauth,
    webhooks,
    flushWebhooks: () => webhooks.flush(),
    faults: server.faults,
    requestLog: server.requestLog,
    limiter: server.limiter,
    clock: state.clock,
    close: async () => {
      await webhooks.flush();
      await server.close();
    },
  };
}
