/**
 * Pipedrive for the REST layer and the runtime. A connection holds either the company's API token
 * (`apiToken`, sent as the `x-api-token` header to the API host) or the tokens of sign in with
 * Pipedrive, this server's OAuth app (`accessToken`, `refreshToken`, `apiDomain`; see oauth.ts): the
 * API is then called on the company's own host (`apiDomain`) with a bearer token, renewed once when
 * Pipedrive refuses it and saved through `save`. The one base is the Pipedrive company the token
 * belongs to; its tables are the entity types (`persons`, `organizations`, `deals`), each table's
 * remote id the type.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  isPipedriveOAuth,
  PIPEDRIVE_OAUTH_URL,
  pipedriveSession,
  pipedriveTokenError,
  pipedriveTokenItems,
  requestPipedriveTokens,
  type SavePipedriveItems,
} from './oauth';
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
  /** This server's Pipedrive app (sign in with Pipedrive); without it Pipedrive connects with an API token only. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Pipedrive's OAuth server, for the authorize page and the token endpoint (https://oauth.pipedrive.com). */
  oauthUrl?: string;
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

/**
 * A signed-in connection's company host (the token answer's `api_domain`): Pipedrive's own
 * `https://{company}.pipedrive.com`, or (local and test servers, the sandbox) any http(s) address.
 * A connection's items can be typed by a person, so any other host is refused.
 */
function apiDomainOf(settings: PipedriveSettings, domain: string): string {
  let url: URL;
  try {
    url = new URL(domain);
  } catch {
    throw new ConnectorError(
      'validation',
      `bad Pipedrive api_domain ${domain}`,
      'The Pipedrive company address is not a valid URL. Sign in with Pipedrive again.',
    );
  }
  const normalized = url.origin;
  if (
    url.protocol === 'https:' &&
    (url.hostname === 'pipedrive.com' || url.hostname.endsWith('.pipedrive.com'))
  )
    return normalized;
  if ((settings.sandboxUrls?.() ?? []).some((u) => new URL(u).origin === normalized)) return normalized;
  if (settings.allowCustomBaseUrl && (url.protocol === 'http:' || url.protocol === 'https:'))
    return normalized;
  throw new ConnectorError(
    'permission_denied',
    `Pipedrive api_domain refused: ${normalized}`,
    'Lockstep calls Pipedrive only on pipedrive.com addresses. Sign in with Pipedrive again.',
  );
}

/**
 * The app's API, or a `baseUrl` item the server honours (its sandbox, a local server); a connection
 * signed in with Pipedrive calls its company's host (`apiDomain`).
 */
const apiUrlOf = (settings: PipedriveSettings, items: PipedriveItems) =>
  !items.baseUrl?.trim() && isPipedriveOAuth(items) && items.apiDomain?.trim()
    ? apiDomainOf(settings, items.apiDomain.trim())
    : resolveApiUrl('Pipedrive', settings.apiUrl ?? PIPEDRIVE_API_URL, settings, items);

/** How a client authenticates: the API token, or a signed-in session's bearer token and its renewal. */
function credentialsOf(settings: PipedriveSettings, items: PipedriveItems, save?: SavePipedriveItems) {
  if (!isPipedriveOAuth(items)) return { apiToken: tokenOf(items) };
  const session = pipedriveSession(settings, items, save);
  session.token();
  return { accessToken: session.token, onAuthFailure: session.renew };
}

function clientFor(settings: PipedriveSettings, items: PipedriveItems, save?: SavePipedriveItems) {
  return createPipedriveClient({
    baseUrl: apiUrlOf(settings, items),
    ...credentialsOf(settings, items, save),
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
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'Pipedrive OAuth client is not configured',
        'Signing in with Pipedrive is not set up on this server (LOCKSTEP_PIPEDRIVE_CLIENT_ID and LOCKSTEP_PIPEDRIVE_CLIENT_SECRET). Use an API token instead.',
      );
    return { clientId: settings.clientId, clientSecret: settings.clientSecret };
  };
  const oauthUrl = settings.oauthUrl ?? PIPEDRIVE_OAUTH_URL;
  return {
    type: 'pipedrive' as const,
    /**
     * Pipedrive's authorize page for this server's app: the person approves the app's scopes for
     * their company. Pipedrive documents no PKCE: the state binds the answer to this sign-in.
     */
    authorizeUrl(input: { redirectUri: string; state: string }): string {
      const url = new URL('/oauth/authorize', oauthUrl);
      url.searchParams.set('client_id', oauthClient().clientId);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('state', input.state);
      return url.toString();
    },
    /** POST /oauth/token: the code for an access token (about an hour), a refresh token and the company's host. */
    async exchangeCode(input: { code: string; redirectUri: string }): Promise<PipedriveItems> {
      const answer = await requestPipedriveTokens(oauthUrl, oauthClient(), {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
      });
      if (!answer.ok) throw pipedriveTokenError(answer, 'exchange');
      const items = pipedriveTokenItems(answer.body, Date.now());
      if (!items.refreshToken || !items.apiDomain)
        throw new ConnectorError(
          'transient',
          'Pipedrive token answer without refresh_token or api_domain',
          'Pipedrive did not complete the sign-in. Please sign in with Pipedrive again.',
        );
      apiDomainOf(settings, items.apiDomain);
      return items;
    },
    /** The user the token belongs to: a cheap authenticated call. */
    async check(items: PipedriveItems, save?: SavePipedriveItems): Promise<{ accountEmail: string | null }> {
      const me = await pipedriveCurrentUser(clientFor(settings, items, save));
      return { accountEmail: me.email ?? null };
    },
    /** One base: the Pipedrive company. */
    async listBases(items: PipedriveItems, save?: SavePipedriveItems) {
      const me = await pipedriveCurrentUser(clientFor(settings, items, save));
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
      save?: SavePipedriveItems,
    ): Promise<PipedriveWebhook> {
      const client = clientFor(settings, items, save);
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
    async discoverSchema(items: PipedriveItems, _companyId: string, save?: SavePipedriveItems) {
      const client = clientFor(settings, items, save);
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

/**
 * The connector a run uses for one connection (tables are entity types); an OAuth access token it
 * renews goes to `save`.
 */
export function createPipedriveRuntimeConnector(
  settings: PipedriveSettings,
  items: PipedriveItems,
  save?: SavePipedriveItems,
): PipedriveConnector {
  return createPipedriveConnector({
    baseUrl: apiUrlOf(settings, items),
    ...credentialsOf(settings, items, save),
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
