/**
 * Pipedrive for the REST layer and the runtime. A connection holds the company's API token
 * (`apiToken`, sent as the `x-api-token` header); OAuth is not built yet. The one base is the
 * Pipedrive company the token belongs to; its tables are the entity types (`persons`,
 * `organizations`, `deals`), each table's remote id the type.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createPipedriveClient,
  PIPEDRIVE_API_URL,
  type PipedriveClientOptions,
  pipedriveCurrentUser,
} from './pipedrive-api';
import { fetchPipedriveChoices, type PipedriveChoices } from './pipedrive-choices';
import {
  createPipedriveConnector,
  PIPEDRIVE_ENTITY_TYPES,
  type PipedriveConnector,
  type PipedriveEntityType,
  type PipedriveField,
  type PipedriveFieldDef,
  pipedriveFields,
} from './pipedrive-connector';
import { PIPEDRIVE_EVENT_OBJECTS, PIPEDRIVE_WEBHOOK_USER } from './webhooks';

export type PipedriveItems = Record<string, string>;

/**
 * The webhooks a Pipedrive company sends Lockstep its changes with, one per synced object: their ids
 * (comma-separated, in PIPEDRIVE_ENTITY_TYPES order) and the HTTP Basic password they all send.
 */
export type PipedriveWebhook = { id: string; secret: string; notificationUrl: string };

type PipedriveWebhookRow = {
  id: number;
  event_object?: string;
  event_action?: string;
  subscription_url?: string;
  version?: string;
  is_active?: number | boolean;
};

export type PipedriveSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.pipedrive.com; the simulator in tests). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep, the burst limit of the plan. */
  client?: Pick<
    PipedriveClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perTwoSeconds'
  >;
};

const TABLE_NAMES: Record<PipedriveEntityType, string> = {
  persons: 'Persons',
  organizations: 'Organizations',
  deals: 'Deals',
};
const FIELDS_PATH: Record<PipedriveEntityType, string> = {
  persons: 'personFields',
  organizations: 'organizationFields',
  deals: 'dealFields',
};

function tokenOf(items: PipedriveItems): string {
  const token = (items.apiToken ?? items.accessToken ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no Pipedrive API token',
      'Enter your Pipedrive API token (in Pipedrive: Settings > Personal preferences > API).',
    );
  }
  return token;
}

/** The app's API, or a `baseUrl` item the server honours (its sandbox, a local server). */
const apiUrlOf = (settings: PipedriveSettings, items: PipedriveItems) =>
  resolveApiUrl('Pipedrive', settings.apiUrl ?? PIPEDRIVE_API_URL, settings, items);

function clientFor(settings: PipedriveSettings, items: PipedriveItems) {
  return createPipedriveClient({
    baseUrl: apiUrlOf(settings, items),
    apiToken: tokenOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 4_500,
    maxAttempts: 3,
    ...settings.client,
  });
}

/**
 * Discovery of one entity type: its synced fields as canonical fields (with `choices`, owners,
 * pipelines and stages as selects of their names).
 */
export function pipedriveDiscoveredTable(
  type: PipedriveEntityType,
  defs: PipedriveFieldDef[],
  choices?: PipedriveChoices,
) {
  const fields = pipedriveFields(type, defs, choices);
  const synced = new Set(fields.map((f) => f.remoteId));
  return {
    remoteId: type,
    name: TABLE_NAMES[type],
    extras: {
      pipedriveEntityType: type,
      unsupportedFields: defs
        .filter((d) => /^[0-9a-f]{40}$/i.test(d.key) && !synced.has(d.key) && d.active_flag !== false)
        .map((d) => d.name),
    },
    fields: fields.map((f: PipedriveField) => ({
      remoteId: f.remoteId,
      name: f.name,
      fieldType: f.fieldType,
      readOnly: f.readOnly,
      options: {
        pipedriveType: f.pipedriveType,
        ...(f.options && (f.fieldType === 'single_select' || f.fieldType === 'multi_select')
          ? { choices: f.options.map((o) => o.label) }
          : {}),
        ...(f.required ? { required: true } : {}),
        ...(f.kind === 'custom' ? { customFieldKey: f.remoteId } : {}),
        // A linked record names its table (the entity type), as other connectors' links do.
        ...(f.references ? { references: f.references } : {}),
      },
    })),
  };
}

export function createPipedrivePort(settings: PipedriveSettings = {}) {
  return {
    type: 'pipedrive' as const,
    /** The user the token belongs to: a cheap authenticated call. */
    async check(items: PipedriveItems): Promise<{ accountEmail: string | null }> {
      const me = await pipedriveCurrentUser(clientFor(settings, items));
      return { accountEmail: me.email ?? null };
    },
    /** One base: the Pipedrive company. */
    async listBases(items: PipedriveItems) {
      const me = await pipedriveCurrentUser(clientFor(settings, items));
      return [
        {
          remoteId: String(me.company_id),
          name: me.company_name ? `Pipedrive: ${me.company_name}` : `Pipedrive company ${me.company_id}`,
        },
      ];
    },
    /**
     * The company's webhooks to `notificationUrl`, one per synced object (person, organization,
     * deal; every action; version 2.0), all sending `lockstep` and one random password by HTTP Basic
     * auth: the ones Pipedrive still lists are kept, missing ones made again
     * (`POST /v1/webhooks`). Webhooks at the same address that Lockstep no longer knows (made by a
     * call whose answer was lost, or with a password now replaced) are deleted (best effort).
     */
    async ensureWebhook(
      items: PipedriveItems,
      _companyId: string,
      notificationUrl: string,
      known: PipedriveWebhook | null,
    ): Promise<PipedriveWebhook> {
      const client = clientFor(settings, items);
      const { body } = await client.request<{ data: PipedriveWebhookRow[] | null }>({
        method: 'GET',
        path: '/api/v1/webhooks',
      });
      const listed = (body?.data ?? []).filter(
        (w) => w.subscription_url === notificationUrl && w.is_active !== 0 && w.is_active !== false,
      );
      const same = known?.secret && known.notificationUrl === notificationUrl;
      const knownIds = new Set(same ? known.id.split(',') : []);
      const secret = same ? known.secret : randomBytes(24).toString('base64url');
      const ids: string[] = [];
      for (const type of PIPEDRIVE_ENTITY_TYPES) {
        const object = PIPEDRIVE_EVENT_OBJECTS[type];
        const kept = listed.find(
          (w) => knownIds.has(String(w.id)) && w.event_object === object && w.version !== '1.0',
        );
        if (kept) {
          ids.push(String(kept.id));
          continue;
        }
        const { body: made } = await client.request<{ data: { id: number } }>({
          method: 'POST',
          path: '/api/v1/webhooks',
          body: {
            subscription_url: notificationUrl,
            event_action: '*',
            event_object: object,
            name: `Lockstep (${type})`,
            http_auth_user: PIPEDRIVE_WEBHOOK_USER,
            http_auth_password: secret,
            version: '2.0',
          },
        });
        ids.push(String(made.data.id));
      }
      for (const w of listed) {
        if (ids.includes(String(w.id))) continue;
        await client
          .request({ method: 'DELETE', path: `/api/v1/webhooks/${encodeURIComponent(String(w.id))}` })
          .catch(() => undefined);
      }
      const hook = { id: ids.join(','), secret, notificationUrl };
      return known && JSON.stringify(hook) === JSON.stringify(known) ? known : hook;
    },
    /** Persons, organizations and deals with their standard and custom fields. */
    async discoverSchema(items: PipedriveItems, _companyId: string) {
      const client = clientFor(settings, items);
      const tables = [];
      for (const type of PIPEDRIVE_ENTITY_TYPES) {
        const defs: PipedriveFieldDef[] = [];
        for (let start = 0, pages = 0; pages < 50; pages++) {
          const { body } = await client.request<{
            data: PipedriveFieldDef[] | null;
            additional_data?: { pagination?: { more_items_in_collection?: boolean; next_start?: number } };
          }>({ method: 'GET', path: `/api/v1/${FIELDS_PATH[type]}`, query: { start, limit: 500 } });
          defs.push(...(body?.data ?? []));
          const p = body?.additional_data?.pagination;
          if (!p?.more_items_in_collection) break;
          start = p.next_start ?? start + (body?.data?.length ?? 0);
        }
        tables.push(pipedriveDiscoveredTable(type, defs, await fetchPipedriveChoices(client, type)));
      }
      return tables;
    },
  };
}

export type PipedrivePort = ReturnType<typeof createPipedrivePort>;

/** The connector a run uses for one connection (tables are entity types). */
export function createPipedriveRuntimeConnector(
  settings: PipedriveSettings,
  items: PipedriveItems,
): PipedriveConnector {
  return createPipedriveConnector({
    baseUrl: apiUrlOf(settings, items),
    apiToken: tokenOf(items),
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
