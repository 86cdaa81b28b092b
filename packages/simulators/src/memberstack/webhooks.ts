/**
 * Memberstack webhooks, configured in the dashboard (Dev Tools) and delivered through Svix: one
 * POST per event to the endpoint, body `{"event", "payload", "timestamp"}` (member.updated adds
 * `reason`), signed the Svix way:
 *   svix-id: msg_...            (the message id; the same on every retry)
 *   svix-timestamp: <seconds>   (the simulator's clock)
 *   svix-signature: v1,<base64 HMAC-SHA256 of "<svix-id>.<svix-timestamp>.<body>">
 * keyed with the base64-decoded part of the endpoint's `whsec_...` secret. The `svix` package's
 * `Webhook.verify` and `@memberstack/admin`'s `verifyWebhookSignature` both accept these;
 * both reject timestamps more than 5 minutes from their own clock.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { type Clock, randomAlphanumeric } from '../http.ts';
import {
  type ChangeEvent,
  type MemberstackState,
  type Mode,
  renderConnection,
  renderMember,
} from './model.ts';

export const WEBHOOK_EVENTS = [
  'member.created',
  'member.updated',
  'member.deleted',
  'member.plan.added',
  'member.plan.canceled',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

export type WebhookOptions = {
  /** The endpoint URL entered in the dashboard. */
  url: string;
  /** The endpoint's signing secret, `whsec_<base64>`; made up when not given. */
  secret?: string;
  /** The event types the endpoint is subscribed to (default: all). */
  events?: WebhookEventType[];
  /** Which mode's events the endpoint gets (default sandbox: test-mode webhooks). */
  mode?: Mode;
  fetch?: typeof fetch;
};

export type WebhookMessage = {
  /** `msg_...` */
  id: string;
  event: WebhookEventType;
  body: string;
};

export type WebhookDelivery = {
  message: WebhookMessage;
  timestamp: string;
  signature: string;
  attempt: number;
  status?: number;
  error?: string;
  /** Set once retryFailed has sent it again. */
  retried?: boolean;
};

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The Svix `svix-signature` value for one message. */
export function svixSignature(secret: string, msgId: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The delivered body: what Memberstack puts in `payload` for each event. */
export function webhookBody(state: MemberstackState, change: ChangeEvent): Record<string, unknown> {
  switch (change.event) {
    case 'member.created':
      return {
        event: change.event,
        payload: renderMember(state, change.member, { json: false }),
        timestamp: change.at,
      };
    case 'member.updated': {
      const m = change.member;
      // The member as Memberstack sends it on update: no plan connections or JSON blob.
      const payload = {
        auth: { email: m.email },
        customFields: { ...m.customFields },
        id: m.id,
        metaData: { ...m.metaData },
        profileImage: m.profileImage,
        stripeCustomerId: m.stripeCustomerId,
        verified: m.verified,
      };
      return { event: change.event, payload, reason: change.reason, timestamp: change.at };
    }
    case 'member.deleted':
      return { event: change.event, payload: { id: change.memberId }, timestamp: change.at };
    default: {
      const m = change.member;
      return {
        event: change.event,
        payload: {
          member: {
            id: m.id,
            email: m.email,
            metaData: { ...m.metaData },
            stripeCustomerId: m.stripeCustomerId,
          },
          planConnection: renderConnection(state, change.connection),
        },
        timestamp: change.at,
      };
    }
  }
}

function modeOf(change: ChangeEvent): Mode {
  return change.event === 'member.deleted' ? change.mode : change.member.mode;
}

export class WebhookDispatcher {
  readonly url: string;
  readonly secret: string;
  readonly events: Set<WebhookEventType>;
  readonly mode: Mode;
  readonly deliveries: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    options: WebhookOptions,
    private readonly state: MemberstackState,
    private readonly clock: Clock,
  ) {
    this.url = options.url;
    this.secret = options.secret ?? newWebhookSecret();
    this.events = new Set(options.events ?? WEBHOOK_EVENTS);
    this.mode = options.mode ?? 'sandbox';
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** Turn a change into a message (rendered now, as the member is) and send it after this tick. */
  handle(change: ChangeEvent): void {
    if (modeOf(change) !== this.mode || !this.events.has(change.event)) return;
    const message: WebhookMessage = {
      id: `msg_${randomAlphanumeric(27)}`,
      event: change.event,
      body: JSON.stringify(webhookBody(this.state, change)),
    };
    // After the API call has answered, as Svix delivers asynchronously.
    const t = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send(message, 1));
    this.track(t);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private send(message: WebhookMessage, attempt: number): void {
    const timestamp = String(Math.floor(this.clock.now() / 1000));
    const signature = svixSignature(this.secret, message.id, timestamp, message.body);
    const delivery: WebhookDelivery = { message, timestamp, signature, attempt };
    this.deliveries.push(delivery);
    const p = this.fetchImpl(this.url, {
      method: 'POST',
      body: message.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Svix-Webhooks/1.0 (sender-lockstep-sim; +https://www.svix.com/http-sender/)',
        'svix-id': message.id,
        'svix-timestamp': timestamp,
        'svix-signature': signature,
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

  /**
   * Send the failed deliveries again (Svix retries on its own schedule: 5 s, 5 min, 30 min, ...):
   * same `svix-id`, a new timestamp and signature.
   */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) =>
        !d.retried &&
        (d.error !== undefined || (d.status !== undefined && (d.status < 200 || d.status > 299))),
    );
    for (const d of failed) {
      d.retried = true;
      this.send(d.message, d.attempt + 1);
    }
    return failed.length;
  }

  /** Resolves once every message so far has been delivered (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
