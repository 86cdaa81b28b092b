/**
 * Webhook endpoints (`/v1/webhook_endpoints`) and event delivery as Stripe does it: each event
 * whose type an enabled endpoint of the same mode listens to (or `*`) is POSTed to its URL as
 * JSON, signed with the endpoint's secret (`whsec_...`):
 *   Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 * The time is the simulator's clock; the receiver checks its tolerance (300 s in the official
 * libraries). `pending_webhooks` on the event counts deliveries not yet answered with a 2xx.
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../http.ts';
import { badRequest } from './errors.ts';
import type { Ctx, Json, StripeEvent, StripeState } from './model.ts';
import {
  allowOnly,
  applyMetadata,
  bool,
  invalidParam,
  missingParam,
  nullableStr,
  type Params,
  str,
  stringList,
} from './params.ts';
import { deletedStub } from './resources.ts';

/** The event types the simulator emits (and that endpoints may subscribe to), plus `*`. */
export const EVENT_TYPES = [
  'checkout.session.completed',
  'coupon.created',
  'coupon.deleted',
  'coupon.updated',
  'customer.created',
  'customer.deleted',
  'customer.subscription.created',
  'customer.subscription.deleted',
  'customer.subscription.updated',
  'customer.updated',
  'invoice.created',
  'invoice.finalized',
  'invoice.paid',
  'invoice.payment_failed',
  'invoice.payment_succeeded',
  'price.created',
  'price.deleted',
  'price.updated',
  'product.created',
  'product.deleted',
  'product.updated',
];

/** The `Stripe-Signature` header value for a payload. */
export function signPayload(payload: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

function urlParam(params: Params, required: boolean): string | undefined {
  const url = str(params, 'url');
  if (url === undefined) {
    if (required) throw missingParam('url');
    return undefined;
  }
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw invalidParam('url', `Invalid URL: ${url}`, 'url_invalid');
  return url;
}

function enabledEventsParam(params: Params, required: boolean): string[] | undefined {
  const events = stringList(params, 'enabled_events');
  if (events === undefined) {
    if (required) throw missingParam('enabled_events');
    return undefined;
  }
  if (events.length === 0) throw missingParam('enabled_events');
  events.forEach((e, i) => {
    if (e !== '*' && !EVENT_TYPES.includes(e)) {
      throw invalidParam(
        `enabled_events[${i}]`,
        `Invalid enabled_events[${i}]: unknown or unsupported event type '${e}'`,
      );
    }
  });
  return events;
}

export function createWebhookEndpoint(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['api_version', 'connect', 'description', 'enabled_events', 'metadata', 'url']);
  const url = urlParam(params, true) as string;
  const enabledEvents = enabledEventsParam(params, true) as string[];
  const id = state.newId('we');
  const secret = `whsec_${state.randomId(32)}`;
  const endpoint: Json = {
    id,
    object: 'webhook_endpoint',
    api_version: str(params, 'api_version') ?? null,
    application: null,
    created: state.now(),
    description: nullableStr(params, 'description') ?? null,
    enabled_events: enabledEvents,
    livemode: ctx.livemode,
    metadata: applyMetadata({}, params),
    status: 'enabled',
    url,
  };
  state.hidden.set(id, { secret });
  state.insert('webhook_endpoint', endpoint);
  // The secret is only in the create response.
  return { ...endpoint, secret };
}

export function updateWebhookEndpoint(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['description', 'disabled', 'enabled_events', 'metadata', 'url']);
  const e = state.get('webhook_endpoint', id, ctx.livemode);
  const url = urlParam(params, false);
  const enabledEvents = enabledEventsParam(params, false);
  const disabled = bool(params, 'disabled');
  const description = nullableStr(params, 'description');
  const metadata = applyMetadata(e.metadata as Record<string, string>, params);
  if (url !== undefined) e.url = url;
  if (enabledEvents !== undefined) e.enabled_events = enabledEvents;
  if (disabled !== undefined) e.status = disabled ? 'disabled' : 'enabled';
  if (description !== undefined) e.description = description;
  e.metadata = metadata;
  return e;
}

export function deleteWebhookEndpoint(state: StripeState, id: string, ctx: Ctx): Json {
  state.get('webhook_endpoint', id, ctx.livemode);
  state.drop('webhook_endpoint', id);
  return deletedStub(id, 'webhook_endpoint');
}

export function endpointSecret(state: StripeState, id: string): string {
  const s = state.hidden.get(id)?.secret;
  if (typeof s !== 'string') throw badRequest(`No such webhook endpoint: '${id}'`);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Delivery

export type WebhookOptions = {
  /** Endpoints registered at start (test mode unless `livemode`); each gets a secret unless given. */
  endpoints?: { url: string; enabled_events?: string[]; secret?: string; livemode?: boolean }[];
  /** The fetch used to deliver (tests may capture deliveries without a server). */
  fetch?: typeof fetch;
};

export type WebhookDelivery = {
  endpointId: string;
  url: string;
  eventId: string;
  eventType: string;
  body: string;
  signature: string;
  timestamp: number;
  attempt: number;
  status?: number;
  error?: string;
  retried?: boolean;
};

export class WebhookDispatcher {
  readonly deliveries: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly state: StripeState,
    private readonly clock: Clock,
    options: WebhookOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    state.onEvent((e) => this.handle(e));
  }

  private handle(event: StripeEvent): void {
    const targets = this.state
      .all('webhook_endpoint', event.livemode)
      .filter(
        (e) =>
          e.status === 'enabled' &&
          ((e.enabled_events as string[]).includes('*') ||
            (e.enabled_events as string[]).includes(event.type)),
      );
    if (targets.length === 0) return;
    event.pending_webhooks = targets.length;
    // Delivered after the API call that caused the event has answered.
    const p = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      for (const t of targets) this.send(t, event, 1);
    });
    this.track(p);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private send(endpoint: Json, event: StripeEvent, attempt: number): void {
    const body = JSON.stringify(event, null, 2);
    const timestamp = Math.floor(this.clock.now() / 1000);
    const signature = signPayload(body, endpointSecret(this.state, endpoint.id as string), timestamp);
    const delivery: WebhookDelivery = {
      endpointId: endpoint.id as string,
      url: endpoint.url as string,
      eventId: event.id,
      eventType: event.type,
      body,
      signature,
      timestamp,
      attempt,
    };
    this.deliveries.push(delivery);
    const p = this.fetchImpl(endpoint.url as string, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        'stripe-signature': signature,
      },
    })
      .then(async (res) => {
        delivery.status = res.status;
        await res.arrayBuffer().catch(() => undefined);
        if (res.status >= 200 && res.status < 300) {
          event.pending_webhooks = Math.max(0, (event.pending_webhooks as number) - 1);
        }
      })
      .catch((err: unknown) => {
        delivery.error = err instanceof Error ? err.message : String(err);
      });
    this.track(p);
  }

  /** Send failed deliveries again (Stripe retries with backoff for up to 3 days in live mode). */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) =>
        !d.retried &&
        (d.error !== undefined || (d.status !== undefined && (d.status < 200 || d.status >= 300))),
    );
    for (const d of failed) {
      d.retried = true;
      const endpoint = this.state
        .all('webhook_endpoint', true)
        .concat(this.state.all('webhook_endpoint', false))
        .find((e) => e.id === d.endpointId);
      const event = [...this.state.all('event', true), ...this.state.all('event', false)].find(
        (e) => e.id === d.eventId,
      );
      if (endpoint && event) this.send(endpoint, event as StripeEvent, d.attempt + 1);
    }
    return failed.length;
  }

  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
