/**
 * Memberstack's webhooks (Dev Tools > Webhooks in the dashboard): each delivery is a JSON POST
 * `{ event, timestamp, payload }` (older deliveries name it `data`) sent through Svix and signed with
 * the endpoint's signing secret (`whsec_...`, shown in the dashboard): `svix-id`, `svix-timestamp`
 * and `svix-signature` headers, checked here with Svix's own library (which also refuses a
 * timestamp more than 5 minutes away). Events name a member (`member.created`, `member.updated`,
 * `member.deleted`, `member.plan.created`, `member.plan.updated`, `member.plan.canceled`): they wake
 * a read, they are never taken as data.
 */
import { Webhook } from 'svix';

/** Svix's replay window: deliveries are remembered (by `svix-id`) at least this long. */
export const MEMBERSTACK_WEBHOOK_MAX_AGE_MS = 5 * 60_000;

export type MemberstackWebhookEvent = {
  /** Svix's message id: the same for every retry of one delivery. */
  eventId: string;
  event: string;
  /** The tables the event changes (members; plans too for plan connection events). */
  tables: string[];
  memberId: string | null;
};

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const hit = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
  const v = hit?.[1];
  return Array.isArray(v) ? v[0] : v;
};

/** Whether a delivery is signed by this endpoint's secret and recent (Svix's check). */
export function verifyMemberstackWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
): boolean {
  const id = header(headers, 'svix-id');
  const timestamp = header(headers, 'svix-timestamp');
  const signature = header(headers, 'svix-signature');
  if (!secret.trim() || !id || !timestamp || !signature) return false;
  try {
    new Webhook(secret.trim()).verify(body, {
      'svix-id': id,
      'svix-timestamp': timestamp,
      'svix-signature': signature,
    });
    return true;
  } catch {
    return false;
  }
}

/** The delivery's event, if it names a member; anything else is left out. */
export function parseMemberstackWebhook(
  headers: Record<string, string | string[] | undefined>,
  body: string,
): MemberstackWebhookEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object') return [];
  const e = parsed as { event?: unknown; type?: unknown; payload?: unknown; data?: unknown };
  const event = typeof e.event === 'string' ? e.event : typeof e.type === 'string' ? e.type : '';
  if (!event.startsWith('member.')) return [];
  const payload = (e.payload ?? e.data) as {
    id?: unknown;
    memberId?: unknown;
    member?: { id?: unknown };
  } | null;
  const memberId =
    typeof payload?.id === 'string'
      ? payload.id
      : typeof payload?.memberId === 'string'
        ? payload.memberId
        : typeof payload?.member?.id === 'string'
          ? payload.member.id
          : null;
  const plan = /^member\.(plan|planConnection)\./.test(event);
  const id =
    header(headers, 'svix-id') ??
    `${event}:${memberId ?? ''}:${String((parsed as { timestamp?: unknown }).timestamp ?? '')}`;
  return [{ eventId: id, event, tables: plan ? ['members', 'plans'] : ['members'], memberId }];
}
