/**
 * Outbound messages, Salesforce's own "webhooks" (SOAP API Developer Guide, "Outbound
 * Messaging"): a workflow rule on an object ("created, and every time it's edited") sends a SOAP
 * `notifications` message with up to 100 `Notification`s (each an id and the record's chosen
 * fields) to an endpoint. The receiver must answer `<Ack>true</Ack>`; otherwise the message is
 * retried. Deletions do not fire outbound messages.
 *
 * Salesforce does not sign outbound messages: receivers check the `OrganizationId` (and may
 * require Salesforce's client certificate over TLS, or call back with the optional
 * `SessionId`). The simulator sends what Salesforce sends and nothing more.
 *
 * Changes are collected per object during one tick and sent together, rendered at send time:
 * like Salesforce, a record changed again before a retry is sent with its latest values.
 */
import type { ChangeEvent, SalesforceState, SfRecord } from './model.ts';
import { type FieldDef, fieldDef, OBJECTS } from './schema.ts';

export const MAX_NOTIFICATIONS_PER_MESSAGE = 100;

export type OutboundMessageOptions = {
  /** The endpoint URL of the outbound message. */
  endpointUrl: string;
  /** Objects that send messages and the fields each carries (Id is always sent). Default: every object, all fields. */
  objects?: Record<string, string[]>;
  /** "Send Session ID": include a session the receiver can call the API back with. */
  sendSessionId?: boolean;
  /** Which writes fire: API writes and in-app edits (default both). */
  sources?: ChangeEvent['source'][];
  maxNotificationsPerMessage?: number;
  fetch?: typeof fetch;
};

export type OutboundDelivery = {
  object: string;
  actionId: string;
  notifications: { id: string; recordId: string }[];
  body: string;
  attempt: number;
  status?: number;
  acked: boolean;
  error?: string;
  retried?: boolean;
};

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export class OutboundMessenger {
  readonly deliveries: OutboundDelivery[] = [];
  /** One outbound message definition (ActionId) per object. */
  readonly actionIds: Record<string, string> = {};
  private readonly queue = new Map<string, Map<string, string>>();
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;
  private readonly fields: Record<string, FieldDef[]> = {};
  /** The org's base URL (set once the server listens). */
  baseUrl = '';

  constructor(
    private readonly options: OutboundMessageOptions,
    private readonly state: SalesforceState,
    private readonly sessionId: () => string,
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    const objects =
      options.objects ?? Object.fromEntries(OBJECTS.map((o) => [o.name, o.fields.map((f) => f.name)]));
    for (const [name, names] of Object.entries(objects)) {
      const obj = state.object(name);
      const defs = ['Id', ...names.filter((n) => n.toLowerCase() !== 'id')].map((n) => {
        const fd = fieldDef(obj, n);
        if (!fd) throw new Error(`Outbound message on ${obj.name}: no field ${n}`);
        return fd;
      });
      this.fields[obj.name] = defs;
      this.actionIds[obj.name] = state.makeId('04k');
    }
  }

  handle(e: ChangeEvent): void {
    if (e.kind === 'deleted' || !this.fields[e.object]) return;
    if (this.options.sources && !this.options.sources.includes(e.source)) return;
    let pending = this.queue.get(e.object);
    if (!pending) {
      pending = new Map();
      this.queue.set(e.object, pending);
    }
    // One notification per record per batch; its values are read when the message is sent.
    if (!pending.has(e.id)) pending.set(e.id, this.state.makeId('04l'));
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const t = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.scheduled = false;
      const max = this.options.maxNotificationsPerMessage ?? MAX_NOTIFICATIONS_PER_MESSAGE;
      for (const [object, pending] of this.queue) {
        const items = [...pending].map(([recordId, id]) => ({ id, recordId }));
        for (let i = 0; i < items.length; i += max) this.send(object, items.slice(i, i + max), 1);
      }
      this.queue.clear();
    });
    this.track(t);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private renderRecord(rec: SfRecord): string {
    const fields = this.fields[rec.object.name] ?? [];
    const parts = fields.map((fd) => {
      const v = this.state.value(rec, fd);
      if (v === null) return `<sf:${fd.name} xsi:nil="true"/>`;
      const text = fd.type === 'datetime' && typeof v === 'number' ? new Date(v).toISOString() : String(v);
      return `<sf:${fd.name}>${escapeXml(text)}</sf:${fd.name}>`;
    });
    return `<sObject xsi:type="sf:${rec.object.name}" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">${parts.join('')}</sObject>`;
  }

  /** The SOAP envelope, rendered from the records' current values. */
  render(object: string, notifications: { id: string; recordId: string }[]): string {
    const org15 = this.state.orgId.slice(0, 15);
    const session = this.options.sendSessionId
      ? `<SessionId>${this.sessionId()}</SessionId>`
      : '<SessionId xsi:nil="true"/>';
    const items = notifications
      .map((n) => {
        const rec = this.state.records.get(n.recordId);
        if (!rec) return '';
        return `<Notification><Id>${n.id}</Id>${this.renderRecord(rec)}</Notification>`;
      })
      .join('');
    return (
      '<?xml version="1.0" encoding="UTF-8"?>' +
      '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
      '<soapenv:Body><notifications xmlns="http://soap.sforce.com/2005/09/outbound">' +
      `<OrganizationId>${this.state.orgId}</OrganizationId>` +
      `<ActionId>${this.actionIds[object]}</ActionId>` +
      session +
      `<EnterpriseUrl>${this.baseUrl}/services/Soap/c/62.0/${org15}</EnterpriseUrl>` +
      `<PartnerUrl>${this.baseUrl}/services/Soap/u/62.0/${org15}</PartnerUrl>` +
      items +
      '</notifications></soapenv:Body></soapenv:Envelope>'
    );
  }

  private send(object: string, notifications: { id: string; recordId: string }[], attempt: number): void {
    const body = this.render(object, notifications);
    const delivery: OutboundDelivery = {
      object,
      actionId: this.actionIds[object] as string,
      notifications,
      body,
      attempt,
      acked: false,
    };
    this.deliveries.push(delivery);
    const p = this.fetchImpl(this.options.endpointUrl, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'text/xml; charset=utf-8',
        soapaction: '""',
        'user-agent': 'Salesforce - OutboundMessaging',
      },
    })
      .then(async (res) => {
        delivery.status = res.status;
        const text = await res.text().catch(() => '');
        delivery.acked = res.ok && /<(?:\w+:)?Ack>\s*true\s*<\/(?:\w+:)?Ack>/.test(text);
      })
      .catch((err: unknown) => {
        delivery.error = err instanceof Error ? err.message : String(err);
      });
    this.track(p);
  }

  /** Resend the messages that were not acknowledged (Salesforce retries with backoff for 24 hours). */
  retryFailed(): number {
    const failed = this.deliveries.filter(
      (d) => !d.acked && !d.retried && (d.status !== undefined || d.error !== undefined),
    );
    for (const d of failed) {
      d.retried = true;
      this.send(d.object, d.notifications, d.attempt + 1);
    }
    return failed.length;
  }

  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
