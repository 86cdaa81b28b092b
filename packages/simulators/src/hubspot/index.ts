export {
  ASSOCIATION_TYPES,
  type ChangeEvent,
  type ChangeSource,
  type CrmObject,
  DEFAULT_SEARCH_LAG_MS,
  HubSpotApiError,
  HubSpotState,
  type HubSpotStateOptions,
} from './model.ts';
export {
  DEFAULT_OAUTH_APP as HUBSPOT_DEFAULT_OAUTH_APP,
  HUBSPOT_ACCESS_TOKEN_TTL_SECONDS,
  type HubSpotOAuthApp,
  HubSpotOAuthServer,
} from './oauth.ts';
export { DEFAULT_READ_PROPERTIES, OBJECT_TYPES, type ObjectType, type PropertyDef } from './properties.ts';
export {
  DEFAULT_DAILY,
  DEFAULT_PER_TEN_SECONDS,
  DEFAULT_SEARCH_PER_SECOND,
  type RateLimitOptions,
} from './rate-limit.ts';
export {
  ASSOCIATION_PAGE_SIZE,
  type HubSpotServerOptions,
  MAX_ASSOCIATION_READ_INPUTS,
  MAX_ASSOCIATION_WRITE_INPUTS,
  MAX_BATCH_INPUTS,
  MAX_PAGE_SIZE,
  startHubSpotServer,
} from './routes.ts';
export { SEARCH_MAX_LIMIT, SEARCH_RESULT_CAP } from './search.ts';
export { type CrmSeed as HubSpotCrmSeed, seedCrm as seedHubSpotCrm } from './seed.ts';
export { signatureV3, type WebhookDelivery, type WebhookEvent, type WebhookOptions } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import { HubSpotState, type HubSpotStateOptions } from './model.ts';
import type { HubSpotOAuthServer } from './oauth.ts';
import { OBJECT_TYPES } from './properties.ts';
import type { RateLimiter } from './rate-limit.ts';
import { type HubSpotServerOptions, startHubSpotServer } from './routes.ts';
import { type CrmSeed, seedCrm } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** A private app token with every scope the simulator knows. */
export const DEFAULT_TOKEN = 'pat-na1-00000000-0000-4000-8000-000000000000';

export const ALL_SCOPES = OBJECT_TYPES.flatMap((t) => [
  `crm.objects.${t}.read`,
  `crm.objects.${t}.write`,
  `crm.schemas.${t}.read`,
  `crm.schemas.${t}.write`,
]);

export type StartHubSpotSimulatorOptions = HubSpotStateOptions &
  HubSpotServerOptions & {
    /** Seed the CRM (default true); a number of contacts can be given. */
    seed?: boolean | { contacts?: number };
    /** Extra private app tokens; DEFAULT_TOKEN is registered unless `defaultToken: false`. */
    tokens?: { token: string; scopes?: string[]; expiresAt?: number }[];
    defaultToken?: boolean;
    /** Deliver app webhooks to this target. */
    webhooks?: WebhookOptions;
  };

export type HubSpotSimulator = {
  /** Point the connector's `https://api.hubapi.com` here (the official client's `basePath`). */
  url: string;
  token: string;
  crm: CrmSeed | undefined;
  state: HubSpotState;
  seed: (options?: { contacts?: number }) => CrmSeed;
  /** Edits "in HubSpot" (change source CRM_UI), with the same rules and webhooks as API writes. */
  create: HubSpotState['create'];
  mutate: HubSpotState['update'];
  archive: HubSpotState['archive'];
  merge: HubSpotState['merge'];
  associate: HubSpotState['associate'];
  unassociate: HubSpotState['unassociate'];
  revokeToken: (token: string) => void;
  /** The app's OAuth: `apps`, `consent`, `issueAccessToken`, `accessTokenTtlSeconds`. */
  oauth: HubSpotOAuthServer;
  /** The webhook sender, when `webhooks` was given: deliveries, retryFailed. */
  webhooks: WebhookDispatcher | undefined;
  /** Resolves once every webhook event so far has been delivered. */
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startHubSpotSimulator(
  options: StartHubSpotSimulatorOptions = {},
): Promise<HubSpotSimulator> {
  const state = new HubSpotState(options);
  if (options.defaultToken !== false) {
    state.tokens.add({ token: DEFAULT_TOKEN, scopes: [...ALL_SCOPES], kind: 'pat', userId: '1000001' });
  }
  for (const t of options.tokens ?? []) {
    state.tokens.add({
      token: t.token,
      scopes: t.scopes ?? [...ALL_SCOPES],
      kind: 'pat',
      userId: '1000001',
      ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
    });
  }
  const crm =
    options.seed === false ? undefined : seedCrm(state, typeof options.seed === 'object' ? options.seed : {});
  // Attached after seeding: the seed is history, not news.
  const webhooks = options.webhooks
    ? new WebhookDispatcher(options.webhooks, state.clock, state.portalId)
    : undefined;
  if (webhooks) state.onChange((e) => webhooks.handle(e));
  const server = await startHubSpotServer(state, { knownScopes: ALL_SCOPES, ...options });
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    crm,
    state,
    seed: (o) => seedCrm(state, o),
    create: state.create.bind(state),
    mutate: state.update.bind(state),
    archive: state.archive.bind(state),
    merge: state.merge.bind(state),
    associate: state.associate.bind(state),
    unassociate: state.unassociate.bind(state),
    revokeToken: (t) => state.tokens.revoke(t),
    oauth: server.oauth,
    webhooks,
    flushWebhooks: async () => {
      await webhooks?.flush();
    },
    faults: server.faults,
    requestLog: server.requestLog,
    limiter: server.limiter,
    clock: state.clock,
    close: async () => {
      await webhooks?.flush();
      await server.close();
    },
  };
}
