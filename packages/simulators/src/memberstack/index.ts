export {
  type ChangeEvent,
  type CreateMemberInput,
  type CustomFieldDef,
  DEFAULT_CUSTOM_FIELDS,
  DEFAULT_PLANS,
  type Member,
  MemberstackApiError,
  MemberstackState,
  type MemberstackStateOptions,
  type Mode,
  NO_MEMBER_MESSAGE,
  type PlanConnection,
  type PlanDef,
  SANDBOX_MEMBER_LIMIT,
  type UpdateMemberInput,
} from './model.ts';
export { DEFAULT_PER_SECOND, RATE_LIMIT_MESSAGE, type RateLimitOptions } from './rate-limit.ts';
export {
  DEFAULT_PAGE_SIZE,
  INVALID_KEY_CODE,
  INVALID_KEY_MESSAGE,
  MAX_PAGE_SIZE,
  type MemberstackServerOptions,
  startMemberstackServer,
} from './routes.ts';
export { type MemberSeed, seedMembers } from './seed.ts';
export {
  svixSignature,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookEventType,
  type WebhookOptions,
} from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import { MemberstackState, type MemberstackStateOptions, type Mode } from './model.ts';
import type { RateLimiter } from './rate-limit.ts';
import { type MemberstackServerOptions, modeOfKey, startMemberstackServer } from './routes.ts';
import { type MemberSeed, seedMembers } from './seed.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** A sandbox (test mode) secret key. */
export const DEFAULT_TOKEN = 'sk_sb_5e1f0c8a2b7d4e6f9a3c';

export type StartMemberstackSimulatorOptions = MemberstackStateOptions &
  MemberstackServerOptions & {
    /** Seed the sandbox (default true, 40 members); `{ members: n }` for another count. */
    seed?: boolean | { members?: number };
    /** Extra secret keys (`sk_sb_...` sandbox, `sk_...` live); DEFAULT_TOKEN unless `defaultToken: false`. */
    tokens?: { token: string; expiresAt?: number }[];
    defaultToken?: boolean;
    /** The webhook endpoint set up in the dashboard, delivered through Svix. */
    webhooks?: WebhookOptions;
  };

export type MemberstackSimulator = {
  /** Point the connector's `https://admin.memberstack.com` here (the official client's `baseUrl`). */
  url: string;
  /** The default sandbox secret key. */
  token: string;
  state: MemberstackState;
  /** Ids of the seeded members, oldest first. */
  seeded: MemberSeed | undefined;
  /** Edits "in Memberstack" (the dashboard), with the same rules and webhooks as API writes. */
  create: MemberstackState['create'];
  update: MemberstackState['update'];
  remove: MemberstackState['remove'];
  addPlan: MemberstackState['addPlan'];
  removePlan: MemberstackState['removePlan'];
  revokeKey: (key: string) => void;
  /** The Svix sender, when `webhooks` was given: secret, deliveries, retryFailed. */
  webhooks: WebhookDispatcher | undefined;
  /** Resolves once every webhook message so far has been delivered. */
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

function addKey(state: MemberstackState, token: string, expiresAt?: number): void {
  state.keys.add({
    token,
    scopes: [],
    kind: 'pat',
    userId: modeOfKey(token) satisfies Mode,
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  });
}

export async function startMemberstackSimulator(
  options: StartMemberstackSimulatorOptions = {},
): Promise<MemberstackSimulator> {
  const state = new MemberstackState(options);
  if (options.defaultToken !== false) addKey(state, DEFAULT_TOKEN);
  for (const t of options.tokens ?? []) addKey(state, t.token, t.expiresAt);
  const seeded =
    options.seed === false
      ? undefined
      : seedMembers(state, typeof options.seed === 'object' ? options.seed : {});
  // Attached after seeding: the seed is history, not news.
  const webhooks = options.webhooks ? new WebhookDispatcher(options.webhooks, state, state.clock) : undefined;
  if (webhooks) state.onChange((e) => webhooks.handle(e));
  const server = await startMemberstackServer(state, options);
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    state,
    seeded,
    create: state.create.bind(state),
    update: state.update.bind(state),
    remove: state.remove.bind(state),
    addPlan: state.addPlan.bind(state),
    removePlan: state.removePlan.bind(state),
    revokeKey: (k) => state.keys.revoke(k),
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
