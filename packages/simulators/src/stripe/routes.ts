/**
 * HTTP routes of the Stripe simulator: API key auth (Bearer or Basic; secret `sk_` and
 * restricted `rk_` keys, test or live), the rate limiter, `Idempotency-Key` replays, form-encoded
 * params, `expand[]`, Stripe's error bodies with `Request-Id`, and the v1 endpoints for
 * customers, products, prices, coupons, subscriptions, invoices, events, webhook endpoints,
 * Checkout Sessions and billing portal sessions. Outside `/v1`: the hosted Checkout and portal
 * pages (`/c/pay/{id}`, `/p/session/{id}`) and test helpers under `/test/` (no key needed, like a
 * customer's browser).
 */
import {
  FaultInjector,
  RequestLog,
  type RunningServer,
  type SimRequest,
  type SimResponse,
  startHttpServer,
} from '../http.ts';
import {
  cancelSubscription,
  completeCheckoutSession,
  createCheckoutSession,
  createPortalSession,
  createSubscription,
  failSubscriptionPayment,
  listInvoices,
  listSubscriptions,
  paySubscriptionInvoice,
  updateSubscription,
} from './billing.ts';
import type { ConnectServer } from './connect.ts';
import { noSuch, redactKey, StripeApiError } from './errors.ts';
import {
  API_VERSION,
  type ApiKey,
  type Ctx,
  expandParam,
  type Json,
  type Kind,
  type StripeState,
} from './model.ts';
import {
  allowOnly,
  bool,
  canonicalParams,
  invalidParam,
  type Params,
  parseForm,
  str,
  stringList,
} from './params.ts';
import { RateLimiter, type RateLimitOptions, rateLimitError } from './rate-limit.ts';
import {
  createCoupon,
  createCustomer,
  createPrice,
  createProduct,
  deleteCoupon,
  deleteCustomer,
  deleteProduct,
  listCustomers,
  listPrices,
  listProducts,
  retrieveCustomer,
  updateCoupon,
  updateCustomer,
  updatePrice,
  updateProduct,
} from './resources.ts';
import { createWebhookEndpoint, deleteWebhookEndpoint, updateWebhookEndpoint } from './webhooks.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

const NO_KEY_MESSAGE =
  "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";

export type StripeServerOptions = {
  /** `false` turns the limits off. */
  rateLimit?: false | RateLimitOptions;
};

export type StripeServer = RunningServer & {
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
};

type Call = { params: Params; ctx: Ctx; key: ApiKey; match: string[]; expand: string[] };

type Route = {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  /** The restricted-key resource (`rak_<resource>_read|write`). */
  resource: string;
  run: (state: StripeState, call: Call) => Json;
  kind?: Kind;
  list?: boolean;
  /** The only params the endpoint takes (besides expand), when the runner does not check them. */
  allow?: string[];
};

const ID = '([^/]+)';

function routes(): Route[] {
  const r: Route[] = [];
  const add = (route: Route) => r.push(route);
  const get = (state: StripeState, kind: Kind, c: Call) =>
    state.get(kind, c.match[0] as string, c.ctx.livemode);

  // The key's own account (Retrieve account, `GET /v1/account`): who the key belongs to.
  add({
    method: 'GET',
    pattern: /^\/v1\/account$/,
    resource: 'account',
    allow: [],
    run: (s) => ({
      id: s.accountId,
      object: 'account',
      business_profile: { name: null, url: null },
      business_type: null,
      charges_enabled: true,
      country: 'US',
      default_currency: 'usd',
      details_submitted: true,
      email: null,
      payouts_enabled: true,
      settings: { dashboard: { display_name: null, timezone: 'Etc/UTC' } },
      type: 'standard',
    }),
  });

  // Customers
  add({
    method: 'GET',
    pattern: /^\/v1\/customers$/,
    resource: 'customer',
    kind: 'customer',
    list: true,
    run: (s, c) => listCustomers(s, c.params, c.ctx.livemode),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/customers$/,
    resource: 'customer',
    kind: 'customer',
    run: (s, c) => createCustomer(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/customers/${ID}$`),
    resource: 'customer',
    kind: 'customer',
    allow: [],
    run: (s, c) => retrieveCustomer(s, c.match[0] as string, c.ctx.livemode),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/customers/${ID}$`),
    resource: 'customer',
    kind: 'customer',
    run: (s, c) => updateCustomer(s, c.match[0] as string, c.params, c.ctx),
  });
  add({
    method: 'DELETE',
    pattern: new RegExp(`^/v1/customers/${ID}$`),
    resource: 'customer',
    kind: 'customer',
    run: (s, c) => deleteCustomer(s, c.match[0] as string, c.ctx),
  });

  // Products
  add({
    method: 'GET',
    pattern: /^\/v1\/products$/,
    resource: 'product',
    kind: 'product',
    list: true,
    run: (s, c) => listProducts(s, c.params, c.ctx.livemode),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/products$/,
    resource: 'product',
    kind: 'product',
    run: (s, c) => createProduct(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/products/${ID}$`),
    resource: 'product',
    kind: 'product',
    allow: [],
    run: (s, c) => get(s, 'product', c),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/products/${ID}$`),
    resource: 'product',
    kind: 'product',
    run: (s, c) => updateProduct(s, c.match[0] as string, c.params, c.ctx),
  });
  add({
    method: 'DELETE',
    pattern: new RegExp(`^/v1/products/${ID}$`),
    resource: 'product',
    kind: 'product',
    run: (s, c) => deleteProduct(s, c.match[0] as string, c.ctx),
  });

  // Prices (no DELETE in the API)
  add({
    method: 'GET',
    pattern: /^\/v1\/prices$/,
    resource: 'plan',
    kind: 'price',
    list: true,
    run: (s, c) => listPrices(s, c.params, c.ctx.livemode),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/prices$/,
    resource: 'plan',
    kind: 'price',
    run: (s, c) => createPrice(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/prices/${ID}$`),
    resource: 'plan',
    kind: 'price',
    allow: [],
    run: (s, c) => get(s, 'price', c),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/prices/${ID}$`),
    resource: 'plan',
    kind: 'price',
    run: (s, c) => updatePrice(s, c.match[0] as string, c.params, c.ctx),
  });

  // Coupons
  add({
    method: 'GET',
    pattern: /^\/v1\/coupons$/,
    resource: 'coupon',
    kind: 'coupon',
    list: true,
    allow: ['created', 'ending_before', 'limit', 'starting_after'],
    run: (s, c) => s.list('coupon', c.ctx.livemode, c.params, '/v1/coupons'),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/coupons$/,
    resource: 'coupon',
    kind: 'coupon',
    run: (s, c) => createCoupon(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/coupons/${ID}$`),
    resource: 'coupon',
    kind: 'coupon',
    allow: [],
    run: (s, c) => get(s, 'coupon', c),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/coupons/${ID}$`),
    resource: 'coupon',
    kind: 'coupon',
    run: (s, c) => updateCoupon(s, c.match[0] as string, c.params, c.ctx),
  });
  add({
    method: 'DELETE',
    pattern: new RegExp(`^/v1/coupons/${ID}$`),
    resource: 'coupon',
    kind: 'coupon',
    run: (s, c) => deleteCoupon(s, c.match[0] as string, c.ctx),
  });

  // Subscriptions
  add({
    method: 'GET',
    pattern: /^\/v1\/subscriptions$/,
    resource: 'subscription',
    kind: 'subscription',
    list: true,
    run: (s, c) => listSubscriptions(s, c.params, c.ctx.livemode),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/subscriptions$/,
    resource: 'subscription',
    kind: 'subscription',
    run: (s, c) => createSubscription(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/subscriptions/${ID}$`),
    resource: 'subscription',
    kind: 'subscription',
    allow: [],
    run: (s, c) => get(s, 'subscription', c),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/subscriptions/${ID}$`),
    resource: 'subscription',
    kind: 'subscription',
    run: (s, c) => updateSubscription(s, c.match[0] as string, c.params, c.ctx),
  });
  add({
    method: 'DELETE',
    pattern: new RegExp(`^/v1/subscriptions/${ID}$`),
    resource: 'subscription',
    kind: 'subscription',
    run: (s, c) => cancelSubscription(s, c.match[0] as string, c.ctx, c.params),
  });

  // Invoices (read-only here)
  add({
    method: 'GET',
    pattern: /^\/v1\/invoices$/,
    resource: 'invoice',
    kind: 'invoice',
    list: true,
    run: (s, c) => listInvoices(s, c.params, c.ctx.livemode),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/invoices/${ID}$`),
    resource: 'invoice',
    kind: 'invoice',
    allow: [],
    run: (s, c) => get(s, 'invoice', c),
  });

  // Events
  add({
    method: 'GET',
    pattern: /^\/v1\/events$/,
    resource: 'event',
    kind: 'event',
    list: true,
    run: (s, c) => listEvents(s, c),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/events/${ID}$`),
    resource: 'event',
    kind: 'event',
    run: (s, c) => {
      allowOnly(c.params, []);
      const e = get(s, 'event', c);
      if (!s.eventVisible(e)) throw noSuch('event', c.match[0] as string);
      return e;
    },
  });

  // Webhook endpoints
  add({
    method: 'GET',
    pattern: /^\/v1\/webhook_endpoints$/,
    resource: 'webhook',
    kind: 'webhook_endpoint',
    list: true,
    allow: ['ending_before', 'limit', 'starting_after'],
    run: (s, c) => s.list('webhook_endpoint', c.ctx.livemode, c.params, '/v1/webhook_endpoints'),
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/webhook_endpoints$/,
    resource: 'webhook',
    kind: 'webhook_endpoint',
    run: (s, c) => createWebhookEndpoint(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/webhook_endpoints/${ID}$`),
    resource: 'webhook',
    kind: 'webhook_endpoint',
    allow: [],
    run: (s, c) => get(s, 'webhook_endpoint', c),
  });
  add({
    method: 'POST',
    pattern: new RegExp(`^/v1/webhook_endpoints/${ID}$`),
    resource: 'webhook',
    kind: 'webhook_endpoint',
    run: (s, c) => updateWebhookEndpoint(s, c.match[0] as string, c.params, c.ctx),
  });
  add({
    method: 'DELETE',
    pattern: new RegExp(`^/v1/webhook_endpoints/${ID}$`),
    resource: 'webhook',
    kind: 'webhook_endpoint',
    run: (s, c) => deleteWebhookEndpoint(s, c.match[0] as string, c.ctx),
  });

  // Checkout and the billing portal
  add({
    method: 'POST',
    pattern: /^\/v1\/checkout\/sessions$/,
    resource: 'checkout_session',
    kind: 'checkout.session',
    run: (s, c) => createCheckoutSession(s, c.params, c.ctx),
  });
  add({
    method: 'GET',
    pattern: /^\/v1\/checkout\/sessions$/,
    resource: 'checkout_session',
    kind: 'checkout.session',
    list: true,
    run: (s, c) => listCheckoutSessions(s, c),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/checkout/sessions/${ID}$`),
    resource: 'checkout_session',
    kind: 'checkout.session',
    allow: [],
    run: (s, c) => get(s, 'checkout.session', c),
  });
  add({
    method: 'GET',
    pattern: new RegExp(`^/v1/checkout/sessions/${ID}/line_items$`),
    resource: 'checkout_session',
    run: (s, c) => {
      allowOnly(c.params, ['ending_before', 'limit', 'starting_after']);
      get(s, 'checkout.session', c);
      return structuredClone(s.hidden.get(c.match[0] as string)?.line_items as Json);
    },
  });
  add({
    method: 'POST',
    pattern: /^\/v1\/billing_portal\/sessions$/,
    resource: 'billing_portal_session',
    kind: 'billing_portal.session',
    run: (s, c) => createPortalSession(s, c.params, c.ctx),
  });
  return r;
}

function listEvents(s: StripeState, c: Call): Json {
  allowOnly(c.params, [
    'created',
    'delivery_success',
    'ending_before',
    'limit',
    'starting_after',
    'type',
    'types',
  ]);
  const type = str(c.params, 'type');
  const types = stringList(c.params, 'types');
  if (type !== undefined && types !== undefined) {
    throw invalidParam('types', 'You may only specify one of these parameters: type, types.');
  }
  if (types !== undefined && types.length > 20) throw invalidParam('types', 'You may pass at most 20 types.');
  const deliverySuccess = bool(c.params, 'delivery_success');
  const matches = (t: string, pattern: string) =>
    pattern.endsWith('.*') ? t.startsWith(pattern.slice(0, -1)) : t === pattern;
  return s.list(
    'event',
    c.ctx.livemode,
    c.params,
    '/v1/events',
    (e) =>
      s.eventVisible(e) &&
      (type === undefined || matches(e.type as string, type)) &&
      (types === undefined || types.includes(e.type as string)) &&
      (deliverySuccess === undefined || (e.pending_webhooks === 0) === deliverySuccess),
  );
}

function listCheckoutSessions(s: StripeState, c: Call): Json {
  allowOnly(c.params, [
    'created',
    'customer',
    'ending_before',
    'limit',
    'starting_after',
    'status',
    'subscription',
  ]);
  const customer = str(c.params, 'customer');
  const subscription = str(c.params, 'subscription');
  const status = str(c.params, 'status');
  return s.list(
    'checkout.session',
    c.ctx.livemode,
    c.params,
    '/v1/checkout/sessions',
    (x) =>
      (customer === undefined || x.customer === customer) &&
      (subscription === undefined || x.subscription === subscription) &&
      (status === undefined || x.status === status),
  );
}

/** The key from `Authorization: Bearer <key>` or Basic auth with the key as the user name. */
function apiKeyFrom(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
    const user = decoded.split(':')[0];
    return user || undefined;
  }
  return undefined;
}

type Stored = {
  method: string;
  path: string;
  canonical: string;
  at: number;
  requestId: string;
  response: SimResponse;
};

export async function startStripeServer(
  state: StripeState,
  options: StripeServerOptions = {},
  /** Stripe Connect (OAuth on the connect host, `Stripe-Account`); none: the platform alone. */
  connect?: ConnectServer,
): Promise<StripeServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(
    state.clock,
    options.rateLimit === false ? {} : (options.rateLimit ?? {}),
    options.rateLimit !== false,
  );
  const table = routes();
  const idempotency = new Map<string, Stored>();

  const errorResponse = (
    err: StripeApiError,
    requestId: string,
    livemode: boolean,
    extra: Record<string, string> = {},
  ): SimResponse => ({
    status: err.status,
    body: err.body(requestId, livemode, state.now()),
    headers: { 'Request-Id': requestId, 'Stripe-Version': API_VERSION, ...err.headers, ...extra },
  });

  async function handleApi(req: SimRequest): Promise<SimResponse> {
    const requestId = `req_${state.randomId(14)}`;
    const stripeVersion = (req.headers['stripe-version'] as string | undefined) ?? API_VERSION;
    const baseHeaders = { 'Request-Id': requestId, 'Stripe-Version': stripeVersion };

    const keyText = apiKeyFrom(req.headers.authorization);
    if (!keyText) {
      return errorResponse(
        new StripeApiError(401, { type: 'invalid_request_error', message: NO_KEY_MESSAGE }),
        requestId,
        false,
      );
    }
    // The account the request acts on: the key's own, or (the platform's key with Stripe-Account)
    // a connected account; a legacy OAuth access token is a key of the connected account.
    let account = state;
    let key = state.keys.get(keyText);
    if (!key && connect) {
      const owner = connect.ownerOfKey(keyText);
      if (owner) {
        account = owner.state;
        key = owner.key;
      }
    }
    if (!key) {
      return errorResponse(
        new StripeApiError(401, {
          type: 'invalid_request_error',
          message: `Invalid API Key provided: ${redactKey(keyText)}`,
        }),
        requestId,
        keyText.includes('_live_'),
      );
    }
    const livemode = key.livemode;
    const onBehalf = req.headers['stripe-account'] as string | undefined;
    if (onBehalf !== undefined && onBehalf !== account.accountId) {
      const reached = account === state ? connect?.reachable(onBehalf) : undefined;
      if (!reached) {
        return errorResponse(
          new StripeApiError(403, {
            type: 'invalid_request_error',
            code: 'account_invalid',
            message: `The provided key '${redactKey(key.key)}' does not have access to account '${onBehalf}' (or that account does not exist). Application access may have been revoked.`,
          }),
          requestId,
          livemode,
        );
      }
      account = reached;
    }
    account.baseUrl = state.baseUrl;
    const write = req.method !== 'GET';
    if (!limiter.take(livemode, write)) return errorResponse(rateLimitError(), requestId, livemode);

    let route: Route | undefined;
    let match: string[] = [];
    for (const r of table) {
      if (r.method !== req.method) continue;
      const m = r.pattern.exec(req.path);
      if (m) {
        route = r;
        match = m.slice(1).map(decodeURIComponent);
        break;
      }
    }
    if (!route) {
      return errorResponse(
        new StripeApiError(404, {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${req.method}: ${req.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        }),
        requestId,
        livemode,
      );
    }

    if (key.permissions) {
      const granted = key.permissions[route.resource] ?? 'none';
      const needed = write ? 'write' : 'read';
      if (granted === 'none' || (needed === 'write' && granted !== 'write')) {
        return errorResponse(
          new StripeApiError(403, {
            type: 'invalid_request_error',
            message: `The provided key '${redactKey(key.key)}' does not have the required permissions for this endpoint on account '${account.accountId}'. Having the 'rak_${route.resource}_${needed}' permission would allow this request to continue.`,
          }),
          requestId,
          livemode,
        );
      }
    }

    // Params: the query string for GET, the form body for POST (and both for DELETE).
    let params: Params;
    const contentType = req.headers['content-type'] ?? '';
    if (req.method === 'GET') params = parseForm(req.query);
    else if (req.rawBody !== '' && contentType.includes('application/json')) {
      return errorResponse(
        new StripeApiError(400, {
          type: 'invalid_request_error',
          message:
            'Invalid request: the v1 API takes form-encoded parameters (Content-Type: application/x-www-form-urlencoded), not JSON.',
        }),
        requestId,
        livemode,
      );
    } else params = { ...parseForm(req.query), ...parseForm(req.rawBody) };

    const idemKey =
      req.method === 'POST' ? (req.headers['idempotency-key'] as string | undefined) : undefined;
    const ctx: Ctx = { livemode, requestId, idempotencyKey: idemKey ?? null };
    const headers: Record<string, string> = {
      ...baseHeaders,
      ...(idemKey ? { 'Idempotency-Key': idemKey } : {}),
    };

    let storeKey: string | undefined;
    const canonical = canonicalParams(params);
    if (idemKey !== undefined) {
      if (idemKey.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
        return errorResponse(
          new StripeApiError(400, {
            type: 'invalid_request_error',
            message: `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters long.`,
          }),
          requestId,
          livemode,
        );
      }
      // Idempotency keys are per account and mode.
      storeKey = `${account.accountId}|${livemode ? 'live' : 'test'}|${idemKey}`;
      const prior = idempotency.get(storeKey);
      if (prior && state.clock.now() - prior.at >= IDEMPOTENCY_TTL_MS) idempotency.delete(storeKey);
      else if (prior) {
        if (prior.path !== req.path || prior.method !== req.method) {
          return errorResponse(
            new StripeApiError(400, {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${prior.path}' vs '${req.path}'). Try using a key other than '${idemKey}' if you meant to execute a different request.`,
            }),
            requestId,
            livemode,
          );
        }
        if (prior.canonical !== canonical) {
          return errorResponse(
            new StripeApiError(400, {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idemKey}' if you meant to execute a different request.`,
            }),
            requestId,
            livemode,
          );
        }
        return {
          ...prior.response,
          headers: {
            ...prior.response.headers,
            'Idempotent-Replayed': 'true',
            'Original-Request': prior.requestId,
          },
        };
      }
    }

    let response: SimResponse;
    let save = true;
    try {
      const expand = expandParam(params);
      const { expand: _e, ...rest } = params;
      if (route.allow) allowOnly(rest, route.allow);
      const result = route.run(account, { params: rest, ctx, key, match, expand });
      const body =
        route.kind === undefined
          ? result
          : route.list
            ? account.renderList(route.kind, result, expand)
            : account.render(route.kind, result, expand);
      response = { status: 200, body, headers };
    } catch (err) {
      if (!(err instanceof StripeApiError)) throw err;
      if (err.error.validation) save = false;
      response = errorResponse(err, requestId, livemode, idemKey ? { 'Idempotency-Key': idemKey } : {});
    }
    if (storeKey !== undefined && save) {
      idempotency.set(storeKey, {
        method: req.method,
        path: req.path,
        canonical,
        at: state.clock.now(),
        requestId,
        response,
      });
    }
    return response;
  }

  function html(title: string, body: string): SimResponse {
    return {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      text: `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`,
    };
  }

  function testHelperError(err: unknown): SimResponse {
    if (err instanceof StripeApiError) {
      return errorResponse(err, `req_${state.randomId(14)}`, false);
    }
    throw err;
  }

  /** Pages and test helpers outside /v1. */
  function handleOther(req: SimRequest): SimResponse | undefined {
    const find = (kind: Kind, id: string): Json | undefined => {
      for (const livemode of [false, true]) {
        try {
          return state.get(kind, id, livemode);
        } catch {
          // try the other mode
        }
      }
      return undefined;
    };
    let m = /^\/c\/pay\/([^/]+)$/.exec(req.path);
    if (m && req.method === 'GET') {
      const s = find('checkout.session', m[1] as string);
      if (!s)
        return { status: 404, text: 'Checkout Session not found', headers: { 'content-type': 'text/plain' } };
      return html(
        'Checkout (simulated)',
        `<h1>Pay ${s.amount_total} ${s.currency}</h1><p>Session ${s.id}: ${s.status}</p>` +
          `<form method="post" action="/test/checkout/sessions/${s.id}/complete"><input name="email" value="${(s.customer_email as string | null) ?? ''}"><button>Pay</button></form>`,
      );
    }
    m = /^\/p\/session\/([^/]+)$/.exec(req.path);
    if (m && req.method === 'GET') {
      const s = find('billing_portal.session', m[1] as string);
      if (!s)
        return { status: 404, text: 'Portal session not found', headers: { 'content-type': 'text/plain' } };
      return html(
        'Billing portal (simulated)',
        `<h1>Billing portal</h1><p>Customer ${s.customer}</p><a href="${s.return_url ?? '#'}">Return</a>`,
      );
    }
    if (req.method !== 'POST') return undefined;
    const params = req.rawBody.trim().startsWith('{')
      ? ((req.body ?? {}) as Record<string, string>)
      : (parseForm(req.rawBody) as Record<string, string>);
    m = /^\/test\/checkout\/sessions\/([^/]+)\/complete$/.exec(req.path);
    if (m) {
      const s = find('checkout.session', m[1] as string);
      if (!s) return testHelperError(noSuch('checkout.session', m[1] as string));
      try {
        const done = completeCheckoutSession(state, s.id as string, s.livemode as boolean, {
          ...(typeof params.email === 'string' && params.email !== '' ? { email: params.email } : {}),
          ...(typeof params.name === 'string' && params.name !== '' ? { name: params.name } : {}),
        });
        return { status: 200, body: done };
      } catch (err) {
        return testHelperError(err);
      }
    }
    m = /^\/test\/subscriptions\/([^/]+)\/(fail_payment|pay|cancel)$/.exec(req.path);
    if (m) {
      const s = find('subscription', m[1] as string);
      if (!s) return testHelperError(noSuch('subscription', m[1] as string));
      const ctx: Ctx = { livemode: s.livemode as boolean, requestId: null, idempotencyKey: null };
      try {
        if (m[2] === 'fail_payment') {
          const invoice = failSubscriptionPayment(state, s.id as string, ctx);
          return {
            status: 200,
            body: { subscription: state.get('subscription', s.id as string, ctx.livemode), invoice },
          };
        }
        if (m[2] === 'pay') {
          const invoice = paySubscriptionInvoice(state, s.id as string, ctx);
          return {
            status: 200,
            body: { subscription: state.get('subscription', s.id as string, ctx.livemode), invoice },
          };
        }
        return { status: 200, body: cancelSubscription(state, s.id as string, ctx) };
      } catch (err) {
        return testHelperError(err);
      }
    }
    return undefined;
  }

  const server = await startHttpServer({
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => errorResponse(rateLimitError(), `req_${state.randomId(14)}`, false),
    handler: async (req) => {
      if (req.path.startsWith('/v1/')) return handleApi(req);
      if (connect && req.path.startsWith('/oauth/')) {
        const auth = req.headers.authorization;
        const form = parseForm(req.rawBody) as Record<string, string>;
        if (req.path === '/oauth/authorize' && req.method === 'GET') return connect.authorize(req.query);
        if (req.path === '/oauth/token' && req.method === 'POST') return connect.token(auth, form);
        if (req.path === '/oauth/deauthorize' && req.method === 'POST')
          return connect.deauthorize(auth, form);
      }
      const other = handleOther(req);
      if (other) return other;
      return {
        status: 404,
        body: {
          error: {
            type: 'invalid_request_error',
            message: `Unrecognized request URL (${req.method}: ${req.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
          },
        },
      };
    },
  });
  state.baseUrl = server.url;
  return { ...server, faults, requestLog, limiter };
}
