/**
 * Webhooks as Webflow sends them: each registration (`POST /v2/sites/{id}/webhooks`) gets one
 * POST per event, with body `{triggerType, payload}` (the payload is the item with `siteId`,
 * `workspaceId` and `collectionId`), `x-webflow-timestamp` (ms, the simulator's clock) and
 * `x-webflow-signature` = hex(HMAC-SHA256(key, `${timestamp}:${body}`)). The key is the OAuth
 * app's client secret for a webhook made with an OAuth token, and the webhook's own `secretKey`
 * (returned once, when it is created) for one made with a site token. Webflow retries a failed
 * delivery (anything but a 200) up to three more times, ten minutes apart: `retryFailed()` sends
 * failed ones again.
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../http.ts';
import type { ItemEvent, ItemEventKind } from './model.ts';

export const TRIGGER_TYPES = [
  'form_submission',
  'site_publish',
  'page_created',
  'page_metadata_updated',
  'page_deleted',
  'ecomm_new_order',
  'ecomm_order_changed',
  'ecomm_inventory_changed',
  'user_account_added',
  'user_account_updated',
  'user_account_deleted',
  'collection_item_created',
  'collection_item_changed',
  'collection_item_deleted',
  'collection_item_published',
  'collection_item_unpublished',
  'comment_created',
] as const;

export type TriggerType = (typeof TRIGGER_TYPES)[number];

const TRIGGER_OF: Record<ItemEventKind, TriggerType> = {
  created: 'collection_item_created',
  changed: 'collection_item_changed',
  deleted: 'collection_item_deleted',
  published: 'collection_item_published',
  unpublished: 'collection_item_unpublished',
};

/** Webflow retries a failed delivery up to this many more times. */
export const MAX_RETRIES = 3;
/** Webflow's limit of registrations per trigger type per site. */
export const MAX_PER_TRIGGER = 75;

export type WebhookRegistration = {
  id: string;
  siteId: string;
  workspaceId: string;
  triggerType: TriggerType;
  url: string;
  filter: { name: string } | null;
  createdOn: number;
  lastTriggered: number | null;
  /** The HMAC key: the OAuth app's client secret or the webhook's own secret; none: unsigned. */
  signingKey: string | undefined;
  /** Returned (once) to a site token that created it. */
  secretKey?: string;
};

export type WebhookDelivery = {
  webhookId: string;
  triggerType: TriggerType;
  url: string;
  body: string;
  timestamp: string;
  signature: string | undefined;
  attempt: number;
  status?: number;
  error?: string;
  retried?: boolean;
};

export type WebhookOptions = {
  /** Used for deliveries (default: global fetch). */
  fetch?: typeof fetch;
};

/** The signature Webflow sends, computed as its docs describe. */
export function webflowSignature(key: string, timestamp: string, body: string): string {
  return createHmac('sha256', key).update(`${timestamp}:${body}`, 'utf8').digest('hex');
}

export class WebhookDispatcher {
  readonly registrations = new Map<string, WebhookRegistration>();
  readonly deliveries: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly clock: Clock,
    options: WebhookOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  forSite(siteId: string): WebhookRegistration[] {
    return [...this.registrations.values()].filter((r) => r.siteId === siteId);
  }

  /** Queue a delivery for every registration whose trigger matches this change. */
  handle(event: ItemEvent): void {
    const triggerType = TRIGGER_OF[event.kind];
    for (const reg of this.registrations.values()) {
      if (reg.siteId !== event.siteId || reg.triggerType !== triggerType) continue;
      const body = JSON.stringify({
        triggerType,
        payload: {
          ...event.item,
          siteId: event.siteId,
          workspaceId: event.workspaceId,
          collectionId: event.collectionId,
        },
      });
      reg.lastTriggered = event.at;
      // Sent after the response to the call that made the change, as Webflow does.
      const p = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
        this.send(reg, triggerType, body, 0),
      );
      this.track(p);
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async send(reg: WebhookRegistration, triggerType: TriggerType, body: string, attempt: number) {
    const timestamp = String(this.clock.now());
    const signature = reg.signingKey ? webflowSignature(reg.signingKey, timestamp, body) : undefined;
    const delivery: WebhookDelivery = {
      webhookId: reg.id,
      triggerType,
      url: reg.url,
      body,
      timestamp,
      signature,
      attempt,
    };
    this.deliveries.push(delivery);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature) {
      headers['x-webflow-timestamp'] = timestamp;
      headers['x-webflow-signature'] = signature;
    }
    try {
      const res = await this.fetchImpl(reg.url, { method: 'POST', body, headers, redirect: 'manual' });
      delivery.status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      delivery.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** Send failed deliveries (not a 200) again, up to three retries each. */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) => !d.retried && d.attempt < MAX_RETRIES && (d.error !== undefined || (d.status ?? 200) !== 200),
    );
    for (const d of failed) {
      d.retried = true;
      const reg = this.registrations.get(d.webhookId);
      if (!reg) continue;
      this.track(this.send(reg, d.triggerType, d.body, d.attempt + 1));
    }
    return failed.length;
  }

  /** Resolves once every delivery queued so far has been made (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
