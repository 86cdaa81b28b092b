export { matchFilter, parseSorts, sortRows } from './filter.ts';
export {
  type Actor,
  AttioApiError,
  AttioState,
  type AttioStateOptions,
  type ChangeEvent,
  DEFAULT_RECORD_LIMIT,
  type EntryRow,
  type RecordRow,
  type Webhook,
} from './model.ts';
export {
  DEFAULT_READS_PER_SECOND,
  DEFAULT_WRITES_PER_SECOND,
  RATE_LIMIT_BODY,
  type RateLimitOptions,
} from './rate-limit.ts';
export {
  ALL_SCOPES,
  type AttioServerOptions,
  type OAuthApp,
  startAttioServer,
  WEBHOOK_EVENT_TYPES,
} from './routes.ts';
export { type AttioSeed, DEAL_STAGES, defineSchema, PIPELINE_STAGES, seedData } from './seed.ts';
export type { AttributeDef, AttributeType } from './values.ts';
export { signature, type WebhookDelivery, type WebhookOptions } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import { type Actor, AttioState, type AttioStateOptions, type EntryRow, type RecordRow } from './model.ts';
import type { RateLimiter } from './rate-limit.ts';
import { ALL_SCOPES, type AttioServerOptions, startAttioServer } from './routes.ts';
import { type AttioSeed, defineSchema, seedData } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** An API key with every scope (Attio's keys do not expire). */
export const DEFAULT_TOKEN = 'attio_sim_00000000000000000000000000000000000000000000000000000000';

export type StartAttioSimulatorOptions = AttioStateOptions &
  Omit<AttioServerOptions, 'allowHttpWebhookTargets'> & {
    /** Seed records, entries and people (default true); the schema is always there. */
    seed?: boolean;
    /** Extra API keys, with their scopes (default: every scope). */
    tokens?: { token: string; scopes?: string[] }[];
    /** Register DEFAULT_TOKEN (default true). */
    defaultToken?: boolean;
    /** How webhook deliveries are sent (`fetch`) and whether http:// targets are accepted. */
    webhooks?: WebhookOptions;
  };

type Values = Record<string, unknown>;

export type AttioSimulator = {
  /** Point the connector's `https://api.attio.com` here. */
  url: string;
  token: string;
  seed: AttioSeed | undefined;
  state: AttioState;
  /** The workspace member whose in-app edits `create`, `update` and `remove` simulate. */
  member: string;
  /** Edits "in Attio" by a workspace member, with the API's rules and webhooks. */
  create: (object: string, values: Values) => RecordRow;
  /** `append` as PATCH (default), `overwrite` as PUT. */
  update: (object: string, recordId: string, values: Values, mode?: 'append' | 'overwrite') => RecordRow;
  remove: (object: string, recordId: string) => void;
  addEntry: (list: string, parentObject: string, parentRecordId: string, values?: Values) => EntryRow;
  /** The record as the API renders it. */
  read: (object: string, recordId: string) => Record<string, unknown>;
  addToken: (token: string, scopes?: string[]) => void;
  revokeToken: (token: string) => void;
  webhooks: WebhookDispatcher;
  /** Resolves once every webhook delivery so far has been answered (or failed). */
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startAttioSimulator(options: StartAttioSimulatorOptions = {}): Promise<AttioSimulator> {
  const state = new AttioState(options);
  defineSchema(state);
  const admin = state.members[0]?.id ?? state.workspace.id;
  const addToken = (token: string, scopes: string[] = [...ALL_SCOPES]) => {
    state.tokens.add({ token, scopes, kind: 'pat', userId: admin });
    state.tokenMeta.set(token, {
      tokenId: state.uuid(),
      clientId: state.uuid(),
      issuedAt: state.clock.now(),
    });
  };
  if (options.defaultToken !== false) addToken(DEFAULT_TOKEN);
  for (const t of options.tokens ?? []) addToken(t.token, t.scopes);
  const seed = options.seed === false ? undefined : seedData(state);
  // Attached after seeding: the seed is history, not news.
  const webhooks = new WebhookDispatcher(state, options.webhooks);
  state.onChange((e) => webhooks.handle(e));
  const server = await startAttioServer(state, {
    ...options,
    allowHttpWebhookTargets: options.webhooks?.allowHttpTargets ?? false,
  });
  const inApp: Actor = { type: 'workspace-member', id: admin };
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    seed,
    state,
    member: admin,
    create: (object, values) => state.createRecord(object, values, inApp),
    update: (object, id, values, mode = 'append') => state.updateRecord(object, id, values, mode, inApp),
    remove: (object, id) => state.deleteRecord(object, id, inApp),
    addEntry: (list, parentObject, parentRecordId, values = {}) =>
      state.createEntry(list, parentObject, parentRecordId, values, inApp),
    read: (object, id) => state.renderRecord(state.record(object, id)),
    addToken,
    revokeToken: (t) => state.tokens.revoke(t),
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
