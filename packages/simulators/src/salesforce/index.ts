export { type BulkOptions, DEFAULT_BULK_PROCESSING_MS, DEFAULT_RESULTS_PAGE } from './bulk.ts';
export { DEFAULT_DAILY_API_REQUESTS, type RateLimitOptions } from './limits.ts';
export {
  type ChangeEvent,
  type ChangeSource,
  formatDateTime,
  normalizeId,
  type RecordImage,
  SalesforceApiError,
  SalesforceState,
  type SalesforceStateOptions,
  type SfError,
  type SfRecord,
  type Trigger,
  type TriggerContext,
} from './model.ts';
export {
  DEFAULT_OAUTH_CLIENT,
  DEFAULT_SESSION_TIMEOUT_MS,
  type OAuthClient,
  type OAuthOptions,
} from './oauth.ts';
export {
  CURSOR_TTL_MS,
  DEFAULT_QUERY_BATCH_SIZE,
  LATEST_VERSION,
  MAX_COLLECTION_RECORDS,
  type SalesforceServerOptions,
  startSalesforceServer,
} from './routes.ts';
export { OBJECTS, type ObjectDef } from './schema.ts';
export { type SalesforceSeed, type SeedOptions, seedOrg } from './seed.ts';
export { type OutboundDelivery, type OutboundMessageOptions, OutboundMessenger } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import type { BulkJobs } from './bulk.ts';
import type { ApiUsage } from './limits.ts';
import { SalesforceState, type SalesforceStateOptions } from './model.ts';
import type { OAuthServer } from './oauth.ts';
import { type SalesforceServerOptions, startSalesforceServer } from './routes.ts';
import { type SalesforceSeed, type SeedOptions, seedOrg } from './seed.ts';
import { type OutboundMessageOptions, OutboundMessenger } from './webhooks.ts';

/** A session token for the org's integration user; it does not time out. */
export const DEFAULT_TOKEN =
  '00DSIMULATOR0001!AQsimulatorDefaultSessionTokenLockstep0000000000000000000000000000000000000000';

export type StartSalesforceSimulatorOptions = SalesforceStateOptions &
  SalesforceServerOptions & {
    /** Seed the org (default true), or give counts. */
    seed?: boolean | SeedOptions;
    /** Extra session tokens; DEFAULT_TOKEN is registered unless `defaultToken: false`. */
    tokens?: { token: string; expiresAt?: number }[];
    defaultToken?: boolean;
    /** Outbound messages (Salesforce's webhooks) to this endpoint. */
    webhooks?: OutboundMessageOptions;
  };

export type SalesforceSimulator = {
  /** The instance URL (and login URL: OAuth lives on the same server). */
  url: string;
  token: string;
  /** Ids of the seeded records. */
  org: SalesforceSeed | undefined;
  state: SalesforceState;
  seed: (options?: SeedOptions) => SalesforceSeed;
  /** Edits "in Salesforce" (source `ui`), with the same validation, triggers and messages as API writes. */
  create: (object: string, values: Record<string, unknown>) => string;
  update: (object: string, id: string, values: Record<string, unknown>) => void;
  remove: (object: string, id: string) => void;
  /** A record as the API would return it (all fields), or undefined if absent or deleted. */
  get: (object: string, id: string) => Record<string, unknown> | undefined;
  addTrigger: SalesforceState['addTrigger'];
  revokeToken: (token: string) => void;
  /** A session for the integration user as if issued by OAuth (expires after the session timeout). */
  issueSession: () => string;
  webhooks: OutboundMessenger | undefined;
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  usage: ApiUsage;
  oauth: OAuthServer;
  bulk: BulkJobs;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startSalesforceSimulator(
  options: StartSalesforceSimulatorOptions = {},
): Promise<SalesforceSimulator> {
  const state = new SalesforceState(options);
  if (options.defaultToken !== false) {
    state.tokens.add({
      token: DEFAULT_TOKEN,
      scopes: ['api', 'refresh_token'],
      kind: 'pat',
      userId: state.userId,
    });
  }
  for (const t of options.tokens ?? []) {
    state.tokens.add({
      token: t.token,
      scopes: ['api'],
      kind: 'pat',
      userId: state.userId,
      ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
    });
  }
  const org =
    options.seed === false ? undefined : seedOrg(state, typeof options.seed === 'object' ? options.seed : {});
  const server = await startSalesforceServer(state, options);
  // Attached after seeding: the seed is history, not news.
  const webhooks = options.webhooks
    ? new OutboundMessenger(options.webhooks, state, () => server.oauth.issueAccessToken(undefined, 'api'))
    : undefined;
  if (webhooks) {
    webhooks.baseUrl = server.url;
    state.onChange((e) => webhooks.handle(e));
  }
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    org,
    state,
    seed: (o) => seedOrg(state, o),
    create: (object, values) => state.create(object, values, 'ui').id,
    update: (object, id, values) => {
      state.update(object, id, values, 'ui');
    },
    remove: (object, id) => {
      state.remove(object, id, 'ui');
    },
    get: (object, id) => {
      const rec = state.find(id);
      if (!rec || rec.deleted || rec.object.name.toLowerCase() !== object.toLowerCase()) return undefined;
      return state.image(rec);
    },
    addTrigger: state.addTrigger.bind(state),
    revokeToken: (t) => state.tokens.revoke(t),
    issueSession: () => server.oauth.issueAccessToken(undefined, 'api'),
    webhooks,
    flushWebhooks: async () => {
      await webhooks?.flush();
    },
    faults: server.faults,
    requestLog: server.requestLog,
    usage: server.usage,
    oauth: server.oauth,
    bulk: server.bulk,
    clock: state.clock,
    close: async () => {
      await webhooks?.flush();
      await server.close();
    },
  };
}
