/**
 * General webhooks (v2) as Pipedrive sends them: subscriptions made with POST /api/v1/webhooks
 * (event_action create/change/delete/*, event_object person/organization/deal/*) get one POST per
 * event, a JSON body {data, previous, meta}, and HTTP Basic auth when http_auth_user/password
 * were given. Pipedrive signs nothing. Changes made through the API (change_source "api") and
 * "in Pipedrive" through the simulator's helpers (change_source "app") both notify.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../http.ts';
import { SINGULAR, v2Time } from './fields.ts';
import { badRequest, type ChangeEvent, type PipedriveState } from './model.ts';

export const EVENT_ACTIONS = ['create', 'change', 'delete', '*'];
export const EVENT_OBJECTS = [
  'activity',
  'deal',
  'lead',
  'note',
  'organization',
  'person',
  'pipeline',
  'product',
  'stage',
  'user',
  '*',
];
/** Pipedrive allows 40 webhooks per user. */
export const MAX_WEBHOOKS_PER_USER = 40;

export type Webhook = {
  id: number;
  company_id: number;
  owner_id: number;
  user_id: number;
  event_action: string;
  event_object: string;
  subscription_url: string;
  version: string;
  is_active: 0 | 1;
  add_time: number;
  remove_time: number | null;
  type: 'general';
  http_auth_user: string | null;
  http_auth_password: string | null;
  remove_reason: string | null;
  last_delivery_time: number | null;
  last_http_status: number | null;
  admin_id: number;
  name: string;
};

export type WebhookPayload = {
  data: Record<string, unknown> | null;
  previous: Record<string, unknown> | null;
  meta: Record<string, unknown>;
};

export type WebhookDelivery = {
  webhookId: number;
  url: string;
  payload: WebhookPayload;
  body: string;
  authorization?: string;
  attempt: number;
  status?: number;
  error?: string;
  retried?: boolean;
};

export type WebhookOptions = { fetch?: typeof fetch };

function v1Time(ms: number | null): string | null {
  return ms === null
    ? null
    : new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, '');
}

/** A webhook as the v1 webhooks endpoints return it. */
export function renderWebhook(w: Webhook): Record<string, unknown> {
  return {
    id: w.id,
    company_id: w.company_id,
    owner_id: w.owner_id,
    user_id: w.user_id,
    event_action: w.event_action,
    event_object: w.event_object,
    subscription_url: w.subscription_url,
    version: w.version,
    is_active: w.is_active,
    add_time: v1Time(w.add_time),
    remove_time: v1Time(w.remove_time),
    type: w.type,
    http_auth_user: w.http_auth_user,
    http_auth_password: w.http_auth_password,
    remove_reason: w.remove_reason,
    last_delivery_time: v1Time(w.last_delivery_time),
    last_http_status: w.last_http_status,
    admin_id: w.admin_id,
    name: w.name,
  };
}

export class WebhookDispatcher {
  readonly webhooks = new Map<number, Webhook>();
  readonly deliveries: WebhookDelivery[] = [];
  private nextId = 880_001;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly state: PipedriveState,
    private readonly clock: Clock,
    options: WebhookOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    state.onChange((e) => this.handle(e));
  }

  /** Validate and add a subscription (POST /api/v1/webhooks). */
  add(input: Record<string, unknown>, userId: number): Webhook {
    const errors: Record<string, string> = {};
    const url = input.subscription_url;
    if (typeof url !== 'string' || url === '') errors.subscription_url = 'subscription_url is required';
    else {
      try {
        const u = new URL(url);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') errors.subscription_url = 'Invalid URL';
      } catch {
        errors.subscription_url = 'Invalid URL';
      }
    }
    const action = input.event_action;
    if (typeof action !== 'string' || !EVENT_ACTIONS.includes(action))
      errors.event_action = `event_action must be one of ${EVENT_ACTIONS.join(', ')}`;
    const object = input.event_object;
    if (typeof object !== 'string' || !EVENT_OBJECTS.includes(object))
      errors.event_object = `event_object must be one of ${EVENT_OBJECTS.join(', ')}`;
    if (typeof input.name !== 'string' || input.name === '') errors.name = 'name is required';
    const version = input.version === undefined ? '2.0' : input.version;
    if (version !== '2.0' && version !== '1.0') errors.version = 'version must be 1.0 or 2.0';
    else if (version === '1.0') errors.version = 'The simulator sends webhooks v2 only';
    const owner = typeof input.user_id === 'number' ? input.user_id : userId;
    const active = [...this.webhooks.values()].filter((w) => w.is_active === 1 && w.user_id === owner);
    if (active.length >= MAX_WEBHOOKS_PER_USER)
      errors.user_id = 'The limit of 40 webhooks per user is reached';
    if (Object.keys(errors).length > 0)
      throw Object.assign(badRequest('Validation failed'), { webhookErrors: errors });
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
    const w: Webhook = {
      id: this.nextId++,
      company_id: this.state.companyId,
      owner_id: userId,
      user_id: owner,
      event_action: action as string,
      event_object: object as string,
      subscription_url: url as string,
      version: '2.0',
      is_active: 1,
      add_time: this.clock.now(),
      remove_time: null,
      type: 'general',
      http_auth_user: str(input.http_auth_user),
      http_auth_password: str(input.http_auth_password),
      remove_reason: null,
      last_delivery_time: null,
      last_http_status: null,
      admin_id: userId,
      name: input.name as string,
    };
    this.webhooks.set(w.id, w);
    return w;
  }

  /** Active subscriptions, as GET /api/v1/webhooks lists them. */
  active(): Webhook[] {
    return [...this.webhooks.values()].filter((w) => w.is_active === 1);
  }

  remove(id: number): boolean {
    const w = this.webhooks.get(id);
    if (!w || w.is_active === 0) return false;
    w.is_active = 0;
    w.remove_time = this.clock.now();
    w.remove_reason = 'user_removed';
    return true;
  }

  handle(e: ChangeEvent): void {
    const entity = SINGULAR[e.kind];
    for (const w of this.active()) {
      if (w.event_action !== '*' && w.event_action !== e.action) continue;
      if (w.event_object !== '*' && w.event_object !== entity) continue;
      const payload: WebhookPayload = {
        data: e.data,
        previous: e.previous,
        meta: {
          action: e.action,
          change_source: e.source,
          company_id: String(this.state.companyId),
          correlation_id: e.correlationId,
          entity_id: String(e.id),
          entity,
          id: randomUUID(),
          is_bulk_edit: false,
          timestamp: v2Time(e.at),
          type: 'general',
          user_id: String(e.userId),
          version: '2.0',
          webhook_id: String(w.id),
          webhook_owner_id: String(w.owner_id),
          permitted_user_ids: this.state.users.map((u) => String(u.id)),
          host: `${this.state.companyDomain}.pipedrive.com`,
          attempt: 1,
        },
      };
      // Sent after the API response, as Pipedrive delivers asynchronously.
      const p = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send(w, payload, 1));
      this.track(p);
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async send(w: Webhook, payload: WebhookPayload, attempt: number): Promise<void> {
    const withAttempt: WebhookPayload = { ...payload, meta: { ...payload.meta, attempt } };
    const body = JSON.stringify(withAttempt);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Pipedrive Webhooks',
    };
    if (w.http_auth_user !== null || w.http_auth_password !== null) {
      const credentials = `${w.http_auth_user ?? ''}:${w.http_auth_password ?? ''}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    const delivery: WebhookDelivery = {
      webhookId: w.id,
      url: w.subscription_url,
      payload: withAttempt,
      body,
      attempt,
      ...(headers.authorization ? { authorization: headers.authorization } : {}),
    };
    this.deliveries.push(delivery);
    try {
      const res = await this.fetchImpl(w.subscription_url, { method: 'POST', body, headers });
      delivery.status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      delivery.error = err instanceof Error ? err.message : String(err);
    }
    w.last_delivery_time = this.clock.now();
    w.last_http_status = delivery.status ?? null;
  }

  /** Send failed deliveries again with meta.attempt + 1 (Pipedrive retries with backoff). */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) => !d.retried && (d.error !== undefined || (d.status !== undefined && d.status >= 300)),
    );
    for (const d of failed) {
      d.retried = true;
      const w = this.webhooks.get(d.webhookId);
      if (w) this.track(this.send(w, d.payload, d.attempt + 1));
    }
    return failed.length;
  }

  /** Resolves once every delivery so far has been answered (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
