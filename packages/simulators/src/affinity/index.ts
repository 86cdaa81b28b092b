export {
  AffinityApiError,
  AffinityState,
  type AffinityStateOptions,
  type ChangeEvent,
  ENTITY_OPPORTUNITY,
  ENTITY_ORGANIZATION,
  ENTITY_PERSON,
  MAX_WEBHOOK_SUBSCRIPTIONS,
  VALUE_TYPES,
  WEBHOOK_EVENTS,
} from './model.ts';
export { DEFAULT_MONTHLY, DEFAULT_PER_MINUTE, type RateLimitOptions } from './rate-limit.ts';
export { type AffinityServerOptions, API_VERSION, startAffinityServer, V1_MAX_PAGE_SIZE } from './routes.ts';
export { type AffinitySeed, type SeedCounts, seedCrm } from './seed.ts';
export { V2_MAX_LIMIT } from './v2.ts';
export type { WebhookDelivery, WebhookOptions } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  AffinityState,
  type AffinityStateOptions,
  type FieldValue,
  type ListEntry,
  type Opportunity,
  type Organization,
  type Person,
} from './model.ts';
import type { RateLimiter } from './rate-limit.ts';
import { type AffinityServerOptions, startAffinityServer } from './routes.ts';
import { type AffinitySeed, type SeedCounts, seedCrm, seedUsers } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** The API key of the first user (Affinity keys do not expire and carry no scopes). */
export const DEFAULT_TOKEN = 'affinity-sim-key-00000000000000000000000000000000';

export type StartAffinitySimulatorOptions = AffinityStateOptions &
  AffinityServerOptions & {
    /** Seed the CRM (default true), or give counts; `false` leaves only the two users. */
    seed?: boolean | SeedCounts;
    /** Extra API keys; `user` picks the user (index into `sim.state.users`, default 0). */
    tokens?: { token: string; user?: number }[];
    /** Register DEFAULT_TOKEN (default true). */
    defaultToken?: boolean;
    /** How webhook deliveries are sent (`fetch`) and whether subscribe probes the URL. */
    webhooks?: WebhookOptions;
  };

type Input = Record<string, unknown>;
export type EditKind = 'person' | 'organization' | 'opportunity' | 'listEntry' | 'fieldValue';

export type AffinitySimulator = {
  /** Point the connector's `https://api.affinity.co` here (v1 at the root, v2 under /v2). */
  url: string;
  token: string;
  seed: AffinitySeed | undefined;
  state: AffinityState;
  /** Edits "in Affinity" (by a user in the app), with the API's rules and webhooks. */
  create: {
    (kind: 'person', input: Input): Person;
    (kind: 'organization', input: Input): Organization;
    (kind: 'opportunity', input: Input): Opportunity;
    (kind: 'listEntry', input: Input & { list_id: number }): ListEntry;
    (kind: 'fieldValue', input: Input): FieldValue;
  };
  update: (
    kind: 'person' | 'organization' | 'opportunity' | 'fieldValue',
    id: number,
    input: Input,
  ) => unknown;
  remove: (kind: EditKind, id: number, listId?: number) => void;
  addToken: (token: string, user?: number) => void;
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

export async function startAffinitySimulator(
  options: StartAffinitySimulatorOptions = {},
): Promise<AffinitySimulator> {
  const state = new AffinityState(options);
  seedUsers(state);
  const addToken = (token: string, user = 0) => {
    const u = state.users[user] ?? state.owner;
    state.tokens.add({ token, scopes: [], kind: 'pat', userId: String(u.id) });
    state.keyCreatedAt.set(token, state.clock.now());
  };
  if (options.defaultToken !== false) addToken(DEFAULT_TOKEN);
  for (const t of options.tokens ?? []) addToken(t.token, t.user);
  const seed =
    options.seed === false ? undefined : seedCrm(state, typeof options.seed === 'object' ? options.seed : {});
  // Attached after seeding: the seed is history, not news.
  const webhooks = new WebhookDispatcher(state, options.webhooks);
  state.onChange((e) => webhooks.handle(e));
  const server = await startAffinityServer(state, { ...options, webhooks: () => webhooks });

  const create = ((kind: EditKind, input: Input) => {
    switch (kind) {
      case 'person':
        return state.createPerson(input, 'app');
      case 'organization':
        return state.createOrganization(input, 'app');
      case 'opportunity':
        return state.createOpportunity(input, 'app');
      case 'listEntry':
        return state.createListEntry(Number(input.list_id), input, 'app');
      default:
        return state.createFieldValue(input, 'app');
    }
  }) as AffinitySimulator['create'];

  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    seed,
    state,
    create,
    update: (kind, id, input) => {
      if (kind === 'person') return state.updatePerson(id, input, 'app');
      if (kind === 'organization') return state.updateOrganization(id, input, 'app');
      if (kind === 'opportunity') return state.updateOpportunity(id, input, 'app');
      return state.updateFieldValue(id, input, 'app');
    },
    remove: (kind, id, listId) => {
      if (kind === 'person') state.deletePerson(id, 'app');
      else if (kind === 'organization') state.deleteOrganization(id, 'app');
      else if (kind === 'opportunity') state.deleteOpportunity(id, 'app');
      else if (kind === 'listEntry') {
        const entry = state.listEntries.get(id);
        state.deleteListEntry(listId ?? entry?.listId ?? -1, id, 'app');
      } else state.deleteFieldValue(id, 'app');
    },
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
