/**
 * Pipedrive for the REST layer and the runtime. A connection holds the company's API token
 * (`apiToken`, sent as the `x-api-token` header); OAuth is not built yet. The one base is the
 * Pipedrive company the token belongs to; its tables are the entity types (`persons`,
 * `organizations`, `deals`), each table's remote id the type.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createPipedriveClient,
  PIPEDRIVE_API_URL,
  type PipedriveClientOptions,
  pipedriveCurrentUser,
} from './pipedrive-api';
import {
  createPipedriveConnector,
  PIPEDRIVE_ENTITY_TYPES,
  type PipedriveConnector,
  type PipedriveEntityType,
  type PipedriveField,
  type PipedriveFieldDef,
  pipedriveFields,
} from './pipedrive-connector';

export type PipedriveItems = Record<string, string>;

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

/** Discovery of one entity type: its synced fields as canonical fields. */
export function pipedriveDiscoveredTable(type: PipedriveEntityType, defs: PipedriveFieldDef[]) {
  const fields = pipedriveFields(type, defs);
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
        tables.push(pipedriveDiscoveredTable(type, defs));
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
