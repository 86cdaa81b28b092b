/**
 * Webhook deliveries as Attio sends them: each event goes in its own POST to the webhook's
 * target URL as `{webhook_id, events: [event]}`, signed with the webhook's secret:
 * `Attio-Signature` = hex(HMAC-SHA256(secret, raw body)), duplicated as `X-Attio-Signature`,
 * with an `Idempotency-Key` that stays the same across retries. Subscriptions match on
 * `event_type` and an optional `$and`/`$or` filter of `equals`/`not_equals` conditions on
 * dot-separated fields of the event (`id.object_id`, `actor.type`, ...). A 200 or 202 answer
 * is success; other answers and network errors stay failed until `retryFailed()`.
 */
import { createHmac } from 'node:crypto';
import type { AttioState, ChangeEvent, Webhook, WebhookFilterCondition } from './model.ts';

export type WebhookOptions = {
  /** Replaces global fetch for deliveries (tests capture them). */
  fetch?: typeof fetch;
  /** Accept http:// target URLs (Attio requires https). Default false. */
  allowHttpTargets?: boolean;
};

export type WebhookDelivery = {
  webhookId: string;
  targetUrl: string;
  body: string;
  signature: string;
  idempotencyKey: string;
  attempt: number;
  status?: number;
  error?: string;
  retried?: boolean;
};

export function signature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

function fieldOf(event: ChangeEvent, path: string): unknown {
  let cur: unknown = event;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function conditionHolds(event: ChangeEvent, c: WebhookFilterCondition): boolean {
  const v = fieldOf(event, c.field);
  return c.operator === 'equals' ? v === c.value : v !== c.value;
}

export function subscriptionMatches(w: Webhook, event: ChangeEvent): boolean {
  return w.subscriptions.some((s) => {
    if (s.event_type !== event.event_type) return false;
    if (!s.filter) return true;
    if ('$and' in s.filter) return s.filter.$and.every((c) => conditionHolds(event, c));
    return s.filter.$or.some((c) => conditionHolds(event, c));
  });
}

export class WebhookDispatcher {
  readonly deliveries: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly state: AttioState,
    options: WebhookOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  handle(event: ChangeEvent): void {
    for (const w of this.state.webhooks.values()) {
      if (w.status !== 'active' || !subscriptionMatches(w, event)) continue;
      const body = JSON.stringify({ webhook_id: w.id, events: [event] });
      const delivery: WebhookDelivery = {
        webhookId: w.id,
        targetUrl: w.target_url,
        body,
        signature: signature(w.secret, body),
        idempotencyKey: this.state.uuid(),
        attempt: 1,
      };
      // Sent after the API response, as Attio's deliveries are asynchronous.
      this.track(new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send(delivery)));
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async send(d: WebhookDelivery): Promise<void> {
    this.deliveries.push(d);
    try {
      const res = await this.fetchImpl(d.targetUrl, {
        method: 'POST',
        body: d.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Attio 2.0 (https://attio.com/developers/using-webhooks)',
          'attio-signature': d.signature,
          'x-attio-signature': d.signature,
          'idempotency-key': d.idempotencyKey,
        },
      });
      d.status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      d.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** Deliveries that did not get a 200 or 202. */
  get failed(): WebhookDelivery[] {
    return this.deliveries.filter((d) => !d.retried && d.status !== 200 && d.status !== 202);
  }

  /** Send the failed deliveries again (same body, signature and Idempotency-Key). */
  retryFailed(): number {
    const failed = this.failed;
    for (const d of failed) {
      d.retried = true;
      this.track(
        this.send({
          ...d,
          attempt: d.attempt + 1,
          retried: false,
          status: undefined,
          error: undefined,
        }) as Promise<void>,
      );
    }
    return failed.length;
  }

  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
