/**
 * Webhook deliveries as Affinity v1 documents them: each event is POSTed as JSON to the
 * subscription's `webhook_url` as `{type, body, sent_at}` (`sent_at` in Unix seconds, `body` the
 * resource in its v1 form) to every enabled subscription whose `subscriptions` list the event (an
 * empty list means every event). Affinity signs nothing: there is no signature header and no
 * signing secret, so receivers put a secret in the URL and check `sent_at` for freshness.
 *
 * When a subscription is created or its URL changed, Affinity contacts the URL and refuses the
 * subscription if the answer is invalid; the simulator POSTs a probe (an envelope of type
 * `webhook.probe`, an invented name since Affinity does not document the request) and refuses
 * with 422 unless the answer is 2xx. Failed deliveries stay failed until `retryFailed()` (Affinity
 * retries with backoff for up to 10 hours, then disables the subscription).
 */
import type { AffinityState, ChangeEvent, WebhookSubscription } from './model.ts';

export type WebhookOptions = {
  /** Replaces global fetch for deliveries and probes (tests capture them). */
  fetch?: typeof fetch;
  /** Probe the URL when a subscription is created or its URL changes (default true). */
  probe?: boolean;
};

export type WebhookDelivery = {
  subscriptionId: number;
  url: string;
  type: string;
  body: string;
  attempt: number;
  status?: number;
  error?: string;
  retried?: boolean;
};

export function subscribed(w: WebhookSubscription, type: string): boolean {
  return !w.disabled && (w.subscriptions.length === 0 || w.subscriptions.includes(type));
}

export class WebhookDispatcher {
  readonly deliveries: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;
  readonly probeEnabled: boolean;

  constructor(
    private readonly state: AffinityState,
    options: WebhookOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? ((...args) => fetch(...args));
    this.probeEnabled = options.probe ?? true;
  }

  handle(event: ChangeEvent): void {
    for (const w of this.state.webhooks.values()) {
      if (!subscribed(w, event.type)) continue;
      const body = JSON.stringify({
        type: event.type,
        body: event.body,
        sent_at: Math.floor(event.at / 1000),
      });
      this.send({ subscriptionId: w.id, url: w.webhookUrl, type: event.type, body, attempt: 1 });
    }
  }

  /** True when the URL answered the probe with a 2xx. */
  async probe(url: string): Promise<boolean> {
    if (!this.probeEnabled) return true;
    const body = JSON.stringify({
      type: 'webhook.probe',
      body: {},
      sent_at: Math.floor(this.state.clock.now() / 1000),
    });
    try {
      const res = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await res.arrayBuffer();
      return res.ok;
    } catch {
      return false;
    }
  }

  private send(d: WebhookDelivery): void {
    this.deliveries.push(d);
    const p = (async () => {
      try {
        const res = await this.fetchImpl(d.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'Affinity-Webhooks' },
          body: d.body,
        });
        d.status = res.status;
        await res.arrayBuffer();
        if (!res.ok) d.error = `HTTP ${res.status}`;
      } catch (err) {
        d.error = err instanceof Error ? err.message : String(err);
      }
    })();
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  get failed(): WebhookDelivery[] {
    return this.deliveries.filter((d) => d.error !== undefined && !d.retried);
  }

  /** Sends every failed delivery again (attempt + 1). */
  retryFailed(): number {
    const failed = this.failed;
    for (const d of failed) {
      d.retried = true;
      const { status: _s, error: _e, retried: _r, ...rest } = d;
      this.send({ ...rest, attempt: d.attempt + 1 });
    }
    return failed.length;
  }

  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
