export {
  addInterval,
  cancelSubscription,
  completeCheckoutSession,
  failSubscriptionPayment,
  paySubscriptionInvoice,
} from './billing.ts';
export {
  AUTHORIZATION_CODE_TTL_MS,
  type ConnectOptions,
  ConnectServer,
  DEFAULT_CONNECT_CLIENT_ID,
} from './connect.ts';
export { redactKey, StripeApiError } from './errors.ts';
export {
  API_VERSION,
  type ApiKey,
  type Ctx,
  EVENT_RETENTION_SECONDS,
  type Json,
  type Kind,
  MAX_LIST_LIMIT,
  type Permission,
  type StripeEvent,
  StripeState,
  type StripeStateOptions,
} from './model.ts';
export {
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  METADATA_MAX_VALUE_LENGTH,
  parseForm,
} from './params.ts';
export { DEFAULT_LIVE_PER_SECOND, DEFAULT_TEST_PER_SECOND, type RateLimitOptions } from './rate-limit.ts';
export { IDEMPOTENCY_TTL_MS, type StripeServerOptions, startStripeServer } from './routes.ts';
export { type BillingSeed, seedBilling } from './seed.ts';
export { EVENT_TYPES, signPayload, type WebhookDelivery, type WebhookOptions } from './webhooks.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  cancelSubscription,
  completeCheckoutSession,
  createSubscription,
  failSubscriptionPayment,
  paySubscriptionInvoice,
  updateSubscription,
} from './billing.ts';
import { type ConnectOptions, ConnectServer } from './connect.ts';
import { type Ctx, type Json, type Permission, StripeState, type StripeStateOptions } from './model.ts';
import { type Params, toFormParams } from './params.ts';
import type { RateLimiter } from './rate-limit.ts';
import {
  createCoupon,
  createCustomer,
  createPrice,
  createProduct,
  deleteCoupon,
  deleteCustomer,
  deleteProduct,
  updateCoupon,
  updateCustomer,
  updatePrice,
  updateProduct,
} from './resources.ts';
import { type StripeServerOptions, startStripeServer } from './routes.ts';
import { type BillingSeed, seedBilling } from './seed.ts';
import { createWebhookEndpoint, WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

/** A test-mode secret key that may do everything. */
export const DEFAULT_TOKEN =
  'sk_test_51LockstepSimulator0000000000000000000000000000000000000000000000000000000000000000000000000000';
/** A live-mode secret key, registered with the default one. */
export const DEFAULT_LIVE_TOKEN =
  'sk_live_51LockstepSimulator0000000000000000000000000000000000000000000000000000000000000000000000000000';

export type StartStripeSimulatorOptions = StripeStateOptions &
  StripeServerOptions & {
    /** Seed a billing account in test mode (default true); a number of customers can be given. */
    seed?: false | { customers?: number };
    /**
     * Extra keys. The prefix decides the mode (`sk_live_`/`rk_live_` are live); restricted keys
     * (`rk_`) carry `permissions` per resource: customer, product, plan (prices), coupon,
     * subscription, invoice, event, webhook, checkout_session, billing_portal_session.
     */
    tokens?: { token: string; permissions?: Record<string, Permission> }[];
    /** Register DEFAULT_TOKEN and DEFAULT_LIVE_TOKEN (default true). */
    defaultToken?: boolean;
    /** Webhook endpoints to register at start, and the fetch used to deliver. */
    webhooks?: WebhookOptions;
    /** Stripe Connect: the platform's client id and redirect URIs, and accounts that may connect. */
    connect?: ConnectOptions;
  };

/** Objects the simulator's edit helpers handle (edits "in the Dashboard"). */
export type EditableKind = 'customer' | 'product' | 'price' | 'coupon' | 'subscription';

type EditOptions = { livemode?: boolean };

/** Edits "in the Dashboard" of one account (the platform's or a connected one). */
export type AccountEditors = {
  create: (kind: EditableKind, params: Record<string, unknown>, options?: EditOptions) => Json;
  update: (kind: EditableKind, id: string, params: Record<string, unknown>, options?: EditOptions) => Json;
  remove: (kind: Exclude<EditableKind, 'price'>, id: string, options?: EditOptions) => Json;
};

/** A Standard account that may connect to the platform (Connect), with its Dashboard edits. */
export type ConnectedAccount = AccountEditors & { id: string; state: StripeState };

export type StripeSimulator = {
  /** Point the client here: `new Stripe(sim.token, { host: '127.0.0.1', port, protocol: 'http' })`. */
  url: string;
  port: number;
  token: string;
  liveToken: string;
  seed: BillingSeed | undefined;
  state: StripeState;
  /** Edits "in Stripe" (the Dashboard): same rules and events (with `request.id` null) as API writes. */
  create: (kind: EditableKind, params: Record<string, unknown>, options?: EditOptions) => Json;
  update: (kind: EditableKind, id: string, params: Record<string, unknown>, options?: EditOptions) => Json;
  remove: (kind: Exclude<EditableKind, 'price'>, id: string, options?: EditOptions) => Json;
  /** The customer pays on the hosted Checkout page. */
  completeCheckout: (sessionId: string, details?: { email?: string; name?: string }) => Json;
  /** The subscription's next payment fails (`invoice.payment_failed`, `past_due`). */
  failPayment: (subscriptionId: string, options?: EditOptions) => Json;
  /** The open invoice of the subscription is paid (`invoice.paid`); past_due becomes active. */
  payInvoice: (subscriptionId: string, options?: EditOptions) => Json;
  /** The subscription is canceled now (`customer.subscription.deleted`). */
  cancelSubscription: (subscriptionId: string, options?: EditOptions) => Json;
  /** Stripe Connect: OAuth, `connected`, `authorizeAs`, `denyNext`, `revoke(accountId)`. */
  connect: ConnectServer;
  /** Another Standard account (test mode data seeded unless `seed: false`) that may connect. */
  addConnectedAccount: (options?: { id?: string; seed?: false | { customers?: number } }) => ConnectedAccount;
  /** A connected account made earlier (or at start), with its Dashboard edits. */
  connectedAccount: (id: string) => ConnectedAccount;
  /** Register a webhook endpoint (test mode unless `livemode`); returns its id and secret. */
  addWebhookEndpoint: (
    url: string,
    enabledEvents?: string[],
    options?: EditOptions,
  ) => { id: string; secret: string };
  webhooks: WebhookDispatcher;
  /** Resolves once every webhook delivery so far has been answered (or failed). */
  flushWebhooks: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
  clock: Clock;
  close: () => Promise<void>;
};

const ctxOf = (options?: EditOptions): Ctx => ({
  livemode: options?.livemode ?? false,
  requestId: null,
  idempotencyKey: null,
});

function editorsOf(state: StripeState): AccountEditors {
  const create = (kind: EditableKind, params: Record<string, unknown>, o?: EditOptions): Json => {
    const p: Params = toFormParams(params);
    const ctx = ctxOf(o);
    const fns = {
      customer: createCustomer,
      product: createProduct,
      price: createPrice,
      coupon: createCoupon,
      subscription: createSubscription,
    };
    return structuredClone(fns[kind](state, p, ctx));
  };
  const update = (kind: EditableKind, id: string, params: Record<string, unknown>, o?: EditOptions): Json => {
    const p: Params = toFormParams(params);
    const ctx = ctxOf(o);
    const fns = {
      customer: updateCustomer,
      product: updateProduct,
      price: updatePrice,
      coupon: updateCoupon,
      subscription: updateSubscription,
    };
    return structuredClone(fns[kind](state, id, p, ctx));
  };
  const remove = (kind: Exclude<EditableKind, 'price'>, id: string, o?: EditOptions): Json => {
    const ctx = ctxOf(o);
    if (kind === 'customer') return deleteCustomer(state, id, ctx);
    if (kind === 'product') return deleteProduct(state, id, ctx);
    if (kind === 'coupon') return deleteCoupon(state, id, ctx);
    return structuredClone(cancelSubscription(state, id, ctx));
  };
  return { create, update, remove };
}

export async function startStripeSimulator(
  options: StartStripeSimulatorOptions = {},
): Promise<StripeSimulator> {
  const state = new StripeState(options);
  if (options.defaultToken !== false) {
    state.addKey({ key: DEFAULT_TOKEN, livemode: false });
    state.addKey({ key: DEFAULT_LIVE_TOKEN, livemode: true });
  }
  for (const t of options.tokens ?? []) {
    if (!/^(sk|rk)_(test|live)_/.test(t.token)) {
      throw new Error(`Stripe keys start with sk_test_, sk_live_, rk_test_ or rk_live_: ${t.token}`);
    }
    const restricted = t.token.startsWith('rk_');
    state.addKey({
      key: t.token,
      livemode: t.token.includes('_live_'),
      ...(restricted ? { permissions: t.permissions ?? {} } : {}),
    });
  }
  // Connected accounts share the platform's clock; their ids and data are their own.
  let accounts = 0;
  const connect = new ConnectServer(
    state,
    (id) =>
      new StripeState({
        clock: state.clock,
        ...(options.idSeed !== undefined ? { idSeed: options.idSeed * 1000 + ++accounts } : {}),
        ...(id ? { accountId: id } : {}),
      }),
    options.connect,
  );
  const server = await startStripeServer(state, options, connect);
  const seed = options.seed === false ? undefined : seedBilling(state, options.seed ?? {});
  // Attached after seeding: the seed is history, not news.
  const webhooks = new WebhookDispatcher(state, state.clock, options.webhooks);
  const addWebhookEndpoint = (
    url: string,
    enabledEvents: string[] = ['*'],
    o?: EditOptions,
    secret?: string,
  ) => {
    const e = createWebhookEndpoint(state, toFormParams({ url, enabled_events: enabledEvents }), ctxOf(o));
    if (secret) state.hidden.set(e.id as string, { secret });
    return { id: e.id as string, secret: secret ?? (e.secret as string) };
  };
  for (const e of options.webhooks?.endpoints ?? []) {
    addWebhookEndpoint(e.url, e.enabled_events, { livemode: e.livemode ?? false }, e.secret);
  }

  const { create, update, remove } = editorsOf(state);
  const connectedAccount = (id: string): ConnectedAccount => {
    const account = connect.account(id);
    return { id, state: account, ...editorsOf(account) };
  };
  const addConnectedAccount = (o: { id?: string; seed?: false | { customers?: number } } = {}) => {
    const account = connect.addAccount(o.id);
    if (o.seed !== false) seedBilling(account, o.seed ?? {});
    return connectedAccount(account.accountId);
  };
  for (const a of options.connect?.accounts ?? []) addConnectedAccount(a);

  return {
    url: server.url,
    port: Number(new URL(server.url).port),
    token: DEFAULT_TOKEN,
    liveToken: DEFAULT_LIVE_TOKEN,
    seed,
    state,
    create,
    update,
    remove,
    completeCheckout: (id, details) => {
      const livemode = id.startsWith('cs_live_');
      return structuredClone(completeCheckoutSession(state, id, livemode, details));
    },
    failPayment: (id, o) => structuredClone(failSubscriptionPayment(state, id, ctxOf(o))),
    payInvoice: (id, o) => structuredClone(paySubscriptionInvoice(state, id, ctxOf(o))),
    cancelSubscription: (id, o) => structuredClone(cancelSubscription(state, id, ctxOf(o))),
    connect,
    addConnectedAccount,
    connectedAccount,
    addWebhookEndpoint: (url, events, o) => addWebhookEndpoint(url, events, o),
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
