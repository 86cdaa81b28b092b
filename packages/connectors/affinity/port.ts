/**
 * Affinity for the REST layer and the runtime. A connection holds a user's API key (`apiKey`;
 * Settings > API in Affinity); OAuth is not built yet. The one base is the Affinity account
 * (tenant) the key belongs to; its tables are `persons`, `companies`, `opportunities` and one
 * `list-<id>` per list the key's user can see.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  AFFINITY_API_URL,
  type AffinityClientOptions,
  affinityWhoAmI,
  createAffinityClient,
} from './affinity-api';
import {
  type AffinityConnector,
  type AffinityList,
  allPages,
  COMPANY_BUILTINS,
  createAffinityConnector,
  listBuiltins,
  OPPORTUNITY_BUILTINS,
  personBuiltins,
} from './affinity-connector';
import { type AffinityField, type AffinityFieldMeta, affinityFields } from './affinity-values';
import { AFFINITY_MAX_WEBHOOK_SUBSCRIPTIONS, AFFINITY_WEBHOOK_EVENTS } from './webhooks';

export type AffinityItems = Record<string, string>;

export type AffinitySettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.affinity.co; the simulator in tests). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): attempts, waits, pacing. */
  client?: Pick<
    AffinityClientOptions,
    'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perMinute' | 'rateLimitWaitMs'
  >;
};

function keyOf(items: AffinityItems): string {
  const key = (items.apiKey ?? items.accessToken ?? '').trim();
  if (!key) {
    throw new ConnectorError(
      'auth_invalid',
      'no Affinity API key',
      'Enter an Affinity API key (in Affinity: Settings > API > Generate an API key).',
    );
  }
  return key;
}

/** The app's API, or a `baseUrl` item the server honours (its sandbox simulators, a local server). */
const apiUrlOf = (settings: AffinitySettings, items: AffinityItems) =>
  resolveApiUrl('Affinity', settings.apiUrl ?? AFFINITY_API_URL, settings, items);

function clientFor(settings: AffinitySettings, items: AffinityItems) {
  return createAffinityClient({
    baseUrl: apiUrlOf(settings, items),
    apiKey: keyOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 5_000,
    maxAttempts: 3,
    ...settings.client,
  });
}

/** A v1 webhook subscription (`GET /webhook`). */
type AffinityWebhookRow = {
  id: number;
  webhook_url: string;
  subscriptions: string[];
  disabled: boolean;
  created_by?: number;
};

/** The subscription Lockstep keeps for a connection (its URL is the only secret). */
export type AffinityWebhook = { id: string; notificationUrl: string };

const sameEvents = (a: string[], b: readonly string[]) =>
  a.length === b.length && b.every((e) => a.includes(e));

type V1Field = { id: number; list_id?: number | null; dropdown_options?: { id: number; text: string }[] };

/** Discovery of one table: built-ins and fields as canonical fields (dropdown options as choices). */
export function affinityDiscoveredTable(
  remoteId: string,
  name: string,
  builtins: AffinityField[],
  metas: AffinityFieldMeta[],
  options: V1Field[] = [],
  extras: Record<string, unknown> = {},
) {
  const choices = (m: AffinityFieldMeta) => {
    const id = /^field-(\d+)$/.exec(m.id)?.[1];
    const f = id ? options.find((o) => o.id === Number(id)) : undefined;
    return f?.dropdown_options?.map((o) => o.text);
  };
  const taken = new Set(builtins.map((b) => b.remoteId));
  const fields = [...builtins, ...affinityFields(metas, choices).filter((f) => !taken.has(f.remoteId))];
  return {
    remoteId,
    name,
    extras: {
      ...extras,
      unsupportedFields: metas.filter((m) => !fields.some((f) => f.remoteId === m.id)).map((m) => m.id),
    },
    fields: fields.map(({ meta: _m, ...f }) => {
      const { read: _r, ...rest } = f as AffinityField & { read?: unknown };
      return rest;
    }),
  };
}

export function createAffinityPort(settings: AffinitySettings = {}) {
  return {
    type: 'affinity' as const,
    /** The key's user and account (`GET /v2/auth/whoami`): a cheap authenticated call. */
    async check(items: AffinityItems): Promise<{ accountEmail: string | null }> {
      const me = await affinityWhoAmI(clientFor(settings, items));
      return { accountEmail: me.user?.emailAddress ?? null };
    },
    /** One base: the Affinity account (tenant). */
    async listBases(items: AffinityItems) {
      const me = await affinityWhoAmI(clientFor(settings, items));
      return [
        {
          remoteId: String(me.tenant.id),
          name: me.tenant.name || `Affinity ${me.tenant.subdomain ?? ''}`.trim(),
        },
      ];
    },
    /**
     * One webhook subscription per connection, at `notificationUrl` (an address whose key only the
     * server makes: Affinity signs nothing), for the events about synced records. Kept when it is
     * there as made; enabled again, given the events, or moved to a new address when it differs;
     * made again when it is gone. Affinity allows three per account: with three others, a clear
     * refusal. Affinity contacts the address when it is made, so the route must already answer.
     */
    async ensureWebhook(
      items: AffinityItems,
      _tenantId: string,
      notificationUrl: string,
      known: AffinityWebhook | null,
    ): Promise<AffinityWebhook> {
      const client = clientFor(settings, items);
      const { body } = await client.request<AffinityWebhookRow[]>({ method: 'GET', path: '/webhook' });
      const listed = Array.isArray(body) ? body : [];
      const ours =
        listed.find((w) => known && String(w.id) === known.id) ??
        listed.find((w) => w.webhook_url === notificationUrl);
      let id: string;
      if (ours) {
        id = String(ours.id);
        if (
          ours.webhook_url !== notificationUrl ||
          ours.disabled ||
          !sameEvents(ours.subscriptions ?? [], AFFINITY_WEBHOOK_EVENTS)
        ) {
          await client.request({
            method: 'PUT',
            path: `/webhook/${encodeURIComponent(id)}`,
            body: {
              webhook_url: notificationUrl,
              subscriptions: [...AFFINITY_WEBHOOK_EVENTS],
              disabled: false,
            },
          });
        }
      } else {
        if (listed.length >= AFFINITY_MAX_WEBHOOK_SUBSCRIPTIONS) {
          throw new ConnectorError(
            'validation',
            `Affinity account already has ${listed.length} webhook subscriptions`,
            `Affinity allows ${AFFINITY_MAX_WEBHOOK_SUBSCRIPTIONS} webhook subscriptions per account and this one already has ${listed.length} made by other tools, so Lockstep cannot be told of changes at once and checks for them on its schedule instead. Remove one (Affinity API: DELETE /webhook/{id}) to let Lockstep make its own.`,
          );
        }
        const { body: made } = await client.request<AffinityWebhookRow>({
          method: 'POST',
          path: '/webhook/subscribe',
          body: { webhook_url: notificationUrl, subscriptions: [...AFFINITY_WEBHOOK_EVENTS] },
        });
        id = String(made.id);
      }
      // Another subscription at the same address would deliver every event twice.
      for (const w of listed) {
        if (String(w.id) === id || w.webhook_url !== notificationUrl) continue;
        await client
          .request({ method: 'DELETE', path: `/webhook/${encodeURIComponent(String(w.id))}` })
          .catch(() => undefined);
      }
      const hook = { id, notificationUrl };
      return known && known.id === hook.id && known.notificationUrl === notificationUrl ? known : hook;
    },
    /** Persons, companies, opportunities, and every list the key's user can see. */
    async discoverSchema(items: AffinityItems, _tenantId: string) {
      const client = clientFor(settings, items);
      const v1 = async (query: string) => {
        const res = await client.request<V1Field[]>({ method: 'GET', path: `/fields?${query}` });
        return Array.isArray(res.body) ? res.body : [];
      };
      const personMetas = await allPages<AffinityFieldMeta>(client, '/v2/persons/fields');
      const companyMetas = await allPages<AffinityFieldMeta>(client, '/v2/companies/fields');
      const tables = [
        affinityDiscoveredTable(
          'persons',
          'People',
          personBuiltins(personMetas),
          personMetas,
          await v1('entity_type=0'),
        ),
        affinityDiscoveredTable(
          'companies',
          'Companies',
          COMPANY_BUILTINS,
          companyMetas,
          await v1('entity_type=1'),
        ),
        affinityDiscoveredTable('opportunities', 'Opportunities', OPPORTUNITY_BUILTINS, []),
      ];
      for (const list of await allPages<AffinityList>(client, '/v2/lists')) {
        const metas = await allPages<AffinityFieldMeta>(client, `/v2/lists/${list.id}/fields`);
        tables.push(
          affinityDiscoveredTable(
            `list-${list.id}`,
            `List: ${list.name}`,
            listBuiltins(list),
            metas,
            await v1(`list_id=${list.id}`),
            { affinityListId: list.id, affinityListType: list.type },
          ),
        );
      }
      return tables;
    },
  };
}

export type AffinityPort = ReturnType<typeof createAffinityPort>;

/** The connector a run uses for one connection. */
export function createAffinityRuntimeConnector(
  settings: AffinitySettings,
  items: AffinityItems,
): AffinityConnector {
  return createAffinityConnector({
    baseUrl: apiUrlOf(settings, items),
    apiKey: keyOf(items),
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
