export {
  customFieldKey,
  ENTITY_KINDS,
  type EntityKind,
  type FieldDef,
  type FieldType,
  v1Time,
  v2Time,
} from './fields.ts';
export {
  type ChangeEvent,
  type ChangeSource,
  type CustomFieldInput,
  type Entity,
  PipedriveApiError,
  PipedriveState,
  type PipedriveStateOptions,
} from './model.ts';
export {
  BURST_WINDOW_MS,
  DEFAULT_BURST,
  DEFAULT_COSTS,
  DEFAULT_DAILY_TOKENS,
  type RateLimitOptions,
} from './rate-limit.ts';
export {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type OAuthClient,
  type PipedriveServerOptions,
  startPipedriveServer,
} from './routes.ts';
export { type CrmSeed as PipedriveCrmSeed, seedCrm as seedPipedriveCrm } from './seed.ts';
export type { Webhook, WebhookDelivery, WebhookPayload } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import type { EntityKind } from './fields.ts';
import { type ChangeSource, type Entity, PipedriveState, type PipedriveStateOptions } from './model.ts';
import type { RateLimiter } from './rate-limit.ts';
import {
  type OAuthClient,
  type OAuthServer,
  type PipedriveServerOptions,
  startPipedriveServer,
} from './routes.ts';
import { type CrmSeed, seedCrm } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** The company's API token (Settings > Personal preferences > API): 40 hex characters. */
export const DEFAULT_TOKEN = '0123456789abcdef0123456789abcdef01234567';

/** A registered OAuth app (Marketplace Manager), for `/oauth/token`. */
export const DEFAULT_OAUTH_CLIENT: OAuthClient = {
  clientId: 'lockstep-client-id',
  clientSecret: 'lockstep-client-secret',
  redirectUri: 'http://127.0.0.1/oauth/callback',
};

export type StartPipedriveSimulatorOptions = PipedriveStateOptions &
  PipedriveServerOptions & {
    /** Seed the CRM (default true); a number of persons can be given (default 30). */
    seed?: boolean | { persons?: number };
    /** Extra API tokens (of the default user unless userId). DEFAULT_TOKEN is registered unless `defaultToken: false`. */
    tokens?: { token: string; userId?: number }[];
    defaultToken?: boolean;
    /** OAuth apps; DEFAULT_OAUTH_CLIENT when not given. */
    oauthClients?: OAuthClient[];
    webhooks?: WebhookOptions;
  };

export type PipedriveSimulator = {
  /** Use as the API's base: `${url}/api/v2`, `${url}/api/v1` (and `${url}` as the OAuth host). */
  url: string;
  /**
   * The company's own API host (`https://{company_domain}.pipedrive.com`), a second listener with
   * the same API: the `api_domain` OAuth token answers give.
   */
  companyUrl: string;
  token: string;
  crm: CrmSeed | undefined;
  state: PipedriveState;
  seed: (options?: { persons?: number }) => CrmSeed;
  /** Edits "in Pipedrive" (webhook change_source "app"), with the API's validation. */
  create: (kind: EntityKind, input: Record<string, unknown>, userId?: number) => Entity;
  update: (kind: EntityKind, id: number, input: Record<string, unknown>, userId?: number) => Entity;
  remove: (kind: EntityKind, id: number, userId?: number) => Entity;
  revokeToken: (token: string) => void;
  /** Webhook subscriptions and deliveries (`deliveries`, `retryFailed`). */
  webhooks: WebhookDispatcher;
  flushWebhooks: () => Promise<void>;
  oauth: OAuthServer;
  faults: FaultInjector;
  /** Every request, on either host. */
  requestLog: RequestLog;
  /** The requests made on the company host (`companyUrl`). */
  companyRequestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startPipedriveSimulator(
  options: StartPipedriveSimulatorOptions = {},
): Promise<PipedriveSimulator> {
  const state = new PipedriveState(options);
  if (options.defaultToken !== false) {
    state.tokens.add({ token: DEFAULT_TOKEN, scopes: [], kind: 'pat', userId: String(state.defaultUserId) });
  }
  for (const t of options.tokens ?? []) {
    state.tokens.add({
      token: t.token,
      scopes: [],
      kind: 'pat',
      userId: String(t.userId ?? state.defaultUserId),
    });
  }
  const crm =
    options.seed === false ? undefined : seedCrm(state, typeof options.seed === 'object' ? options.seed : {});
  // Attached after seeding: the seed is history, not news.
  const webhooks = new WebhookDispatcher(state, state.clock, options.webhooks);
  const server = await startPipedriveServer(
    state,
    webhooks,
    options.oauthClients ?? [DEFAULT_OAUTH_CLIENT],
    options,
  );
  const app: ChangeSource = 'app';
  return {
    url: server.url,
    companyUrl: server.companyUrl,
    token: DEFAULT_TOKEN,
    crm,
    state,
    seed: (o) => seedCrm(state, o),
    create: (kind, input, userId) => state.create(kind, input, app, userId),
    update: (kind, id, input, userId) => state.update(kind, id, input, app, userId),
    remove: (kind, id, userId) => state.remove(kind, id, app, userId),
    revokeToken: (t) => state.tokens.revoke(t),
    webhooks,
    flushWebhooks: () => webhooks.flush(),
    oauth: server.oauth,
    faults: server.faults,
    requestLog: server.requestLog,
    companyRequestLog: server.companyRequestLog,
    limiter: server.limiter,
    clock: state.clock,
    close: async () => {
      await webhooks.flush();
      await server.close();
    },
  };
}
