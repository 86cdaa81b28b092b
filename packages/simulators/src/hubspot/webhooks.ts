/**
 * App webhooks as HubSpot sends them: events for the app's subscriptions are batched (up to 100
 * per request) into a JSON array POSTed to the app's target URL, signed with the app's client
 * secret: X-HubSpot-Signature-v3 = base64(HMAC-SHA256(secret, method + uri + body + timestamp))
 * with X-HubSpot-Request-Timestamp (ms, the simulator's clock), plus the older v1 signature.
 * Receivers should reject timestamps older than 5 minutes.
 */
import { createHash, createHmac } from 'node:crypto';
import type { Clock } from '../http.ts';
import type { ChangeEvent } from './model.ts';
import { SINGULAR } from './properties.ts';

export const MAX_EVENTS_PER_REQUEST = 100;

export type WebhookSubscription = { subscriptionType: string; propertyName?: string };

export type WebhookOptions = {
  targetUrl: string;
  /** The app's client secret: the HMAC key. */
  clientSecret: string;
  appId?: number;
  /**
   * e.g. 'contact.creation', 'contact.deletion', 'contact.merge', 'contact.propertyChange'
   * (every property, or one with `propertyName`). Default: all four for contacts, companies, deals.
   */
  subscriptions?: (string | WebhookSubscription)[];
  maxEventsPerRequest?: number;
  fetch?: typeof fetch;
};

export type WebhookEvent = {
  eventId: number;
  subscriptionId: number;
  portalId: number;
  appId: number;
  occurredAt: number;
  subscriptionType: string;
  attemptNumber: number;
  objectId: number;
  changeSource: string;
  sourceId?: string;
  changeFlag?: string;
  propertyName?: string;
  propertyValue?: string;
  primaryObjectId?: number;
  mergedObjectIds?: number[];
  newObjectId?: number;
  numberOfPropertiesMoved?: number;
};

export type WebhookDelivery = {
  events: WebhookEvent[];
  body: string;
  timestamp: string;
  attemptNumber: number;
  status?: number;
  error?: string;
  /** Set once retryFailed has sent it again. */
  retried?: boolean;
};

/** The v3 signature, computed as HubSpot documents it. */
export function signatureV3(
  secret: string,
  method: string,
  uri: string,
  body: string,
  timestamp: string,
): string {
  return createHmac('sha256', secret).update(`${method}${uri}${body}${timestamp}`, 'utf8').digest('base64');
}

const DEFAULT_KINDS = ['creation', 'deletion', 'merge', 'propertyChange'];

export class WebhookDispatcher {
  readonly appId: number;
  readonly subscriptions: (WebhookSubscription & { id: number })[];
  readonly deliveries: WebhookDelivery[] = [];
  private queue: WebhookEvent[] = [];
  private scheduled = false;
  private nextEventId = 1000;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly options: WebhookOptions,
    private readonly clock: Clock,
    private readonly portalId: number,
  ) {
    this.appId = options.appId ?? 1_000_001;
    this.fetchImpl = options.fetch ?? fetch;
    const subs =
      options.subscriptions ?? Object.values(SINGULAR).flatMap((o) => DEFAULT_KINDS.map((k) => `${o}.${k}`));
    this.subscriptions = subs.map((s, i) => ({
      ...(typeof s === 'string' ? { subscriptionType: s } : s),
      id: 500_000 + i,
    }));
  }

  /** Turn a CRM change into events for the matching subscriptions and queue them. */
  handle(change: ChangeEvent): void {
    const subscriptionType = `${SINGULAR[change.type]}.${change.kind}`;
    for (const sub of this.subscriptions) {
      if (sub.subscriptionType !== subscriptionType) continue;
      if (change.kind === 'propertyChange' && sub.propertyName && sub.propertyName !== change.propertyName)
        continue;
      const event: WebhookEvent = {
        eventId: this.nextEventId++,
        subscriptionId: sub.id,
        portalId: this.portalId,
        appId: this.appId,
        occurredAt: change.at,
        subscriptionType,
        attemptNumber: 0,
        objectId: Number(change.objectId),
        changeSource: change.source,
        ...(change.source === 'INTEGRATION'
          ? { sourceId: String(this.appId) }
          : { sourceId: 'userId:1000001' }),
      };
      if (change.kind === 'creation') event.changeFlag = 'CREATED';
      if (change.kind === 'deletion') event.changeFlag = 'DELETED';
      if (change.kind === 'propertyChange') {
        event.propertyName = change.propertyName;
        event.propertyValue = change.propertyValue;
      }
      if (change.kind === 'merge') {
        event.changeFlag = 'MERGED';
        event.primaryObjectId = Number(change.primaryObjectId);
        event.mergedObjectIds = change.mergedObjectIds.map(Number);
        event.newObjectId = Number(change.newObjectId);
        event.numberOfPropertiesMoved = 0;
      }
      this.queue.push(event);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // Events of one API call go out together, after the response, as HubSpot batches them.
    const t = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.scheduled = false;
      const max = this.options.maxEventsPerRequest ?? MAX_EVENTS_PER_REQUEST;
      while (this.queue.length > 0) this.send(this.queue.splice(0, max), 0);
    });
    this.track(t);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private send(events: WebhookEvent[], attemptNumber: number): void {
    const withAttempt = events.map((e) => ({ ...e, attemptNumber }));
    const body = JSON.stringify(withAttempt);
    const timestamp = String(this.clock.now());
    const delivery: WebhookDelivery = { events: withAttempt, body, timestamp, attemptNumber };
    this.deliveries.push(delivery);
    const { targetUrl, clientSecret } = this.options;
    const p = this.fetchImpl(targetUrl, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'HubSpot Connect 2.0 (http://dev.hubspot.com/) - Webhooks',
        'x-hubspot-signature-v3': signatureV3(clientSecret, 'POST', targetUrl, body, timestamp),
        'x-hubspot-request-timestamp': timestamp,
        'x-hubspot-signature': createHash('sha256')
          .update(clientSecret + body)
          .digest('hex'),
        'x-hubspot-signature-version': 'v1',
      },
    })
      .then(async (res) => {
        delivery.status = res.status;
        await res.arrayBuffer().catch(() => undefined);
      })
      .catch((err: unknown) => {
        delivery.error = err instanceof Error ? err.message : String(err);
      });
    this.track(p);
  }

  /** Send the failed deliveries again with attemptNumber + 1 (HubSpot retries with backoff). */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) => !d.retried && (d.error !== undefined || (d.status !== undefined && d.status >= 400)),
    );
    for (const d of failed) {
      d.retried = true;
      this.send(d.events, d.attemptNumber + 1);
    }
    return failed.length;
  }

  /** Resolves once every event queued so far has been delivered (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
