/**
 * Attio for the REST layer and the runtime. A connection holds an API key (`apiKey`, made in
 * Workspace settings > Developers) or the access token of sign in with Attio, this server's OAuth
 * app (`accessToken`); both are sent as a bearer token. Attio's OAuth access tokens do not expire
 * (its token answer has no refresh token nor expiry; they last until the app is uninstalled), so
 * there is nothing to renew. The one base is the workspace the token belongs to; its tables are
 * the workspace's objects (people, companies, deals and custom objects), each table's remote id
 * the object's api_slug.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  ATTIO_API_URL,
  type AttioClientOptions,
  attioSelf,
  attioUserMessage,
  createAttioClient,
} from './attio-api';
import {
  ATTIO_LIST_PREFIX,
  type AttioConnector,
  type AttioList,
  type AttioObject,
  createAttioConnector,
  parentAttribute,
} from './attio-connector';
import { type AttioAttribute, attioFields, referenceTarget } from './attio-values';
import { ATTIO_RECORD_EVENTS } from './webhooks';

export type AttioItems = Record<string, string>;

/** The webhook an Attio workspace sends record events to Lockstep with (kept sealed by the caller). */
export type AttioWebhook = { id: string; secret: string; notificationUrl: string };

export type AttioSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.attio.com; the simulator in tests). */
  apiUrl?: string;
  /** This server's Attio app (sign in with Attio); without it Attio connects with an API key only. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Attio's OAuth host, for the authorize page and the token endpoint (https://app.attio.com). */
  oauthUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): attempts, sleep, pacing. */
  client?: Pick<
    AttioClientOptions,
    'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'readsPerSecond' | 'writesPerSecond'
  >;
};

export const ATTIO_OAUTH_URL = 'https://app.attio.com';

/**
 * POST {oauthUrl}/oauth/token (form-encoded: grant_type authorization_code, code, client_id,
 * client_secret, redirect_uri) -> `{access_token, token_type: "Bearer"}`.
 */
async function exchangeAttioCode(
  oauthUrl: string,
  form: Record<string, string>,
): Promise<{ accessToken: string }> {
  let res: Response;
  try {
    res = await fetch(new URL('/oauth/token', oauthUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Attio token endpoint unreachable: ${(error as Error).message}`,
      'Attio is not answering right now; please try again.',
    );
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof answer.access_token === 'string') return { accessToken: answer.access_token };
  const technical =
    `Attio token exchange failed: ${res.status} ${String(answer.code ?? answer.error ?? '')} ${String(answer.message ?? answer.error_description ?? '')}`.trim();
  if (res.status === 429 || res.status >= 500)
    throw new ConnectorError(
      res.status === 429 ? 'rate_limited' : 'transient',
      technical,
      'Attio is not answering right now; please try again.',
    );
  throw new ConnectorError(
    res.status === 401 ? 'auth_invalid' : 'validation',
    technical,
    'Attio did not accept the authorization. Please sign in with Attio again.',
  );
}

function tokenOf(items: AttioItems): string {
  const token = (items.accessToken ?? items.apiKey ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no Attio API key',
      'Sign in with Attio, or enter an Attio API key (Workspace settings > Developers > New access token).',
    );
  }
  return token;
}

/** The app's API, or a `baseUrl` item the server honours (its sandbox simulators, a local server). */
const apiUrlOf = (settings: AttioSettings, items: AttioItems) =>
  resolveApiUrl('Attio', settings.apiUrl ?? ATTIO_API_URL, settings, items);

function clientFor(settings: AttioSettings, items: AttioItems) {
  return createAttioClient({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 5_000,
    maxAttempts: 3,
    ...settings.client,
  });
}

type SelectOption = { id: { option_id?: string; status_id?: string }; title: string; is_archived?: boolean };

/**
 * Discovery of one object: its synced attributes as canonical fields, select/status titles as
 * choices. A record reference to one object names that object's table (its api_slug, the table's
 * remote id) in `references`, as other connectors' linked-record fields do: that is what pairs it
 * with a linked-record field of the other app and carries its ids through the linked tables' links.
 * `objects` are the workspace's objects (Attio gives the allowed objects by id).
 */
export function attioDiscoveredTable(
  object: AttioObject,
  attributes: AttioAttribute[],
  choices: Map<string, string[]> = new Map(),
  objects: AttioObject[] = [object],
) {
  const slug = object.api_slug ?? object.id.object_id;
  const tableOf = (target: string | undefined) => {
    if (!target) return undefined;
    const o = objects.find((x) => x.id.object_id === target || x.api_slug === target);
    return o ? (o.api_slug ?? o.id.object_id) : undefined;
  };
  const fields = attioFields(attributes, (a) => choices.get(a.api_slug)).map((f) => {
    const references = f.fieldType === 'relations' ? tableOf(referenceTarget(f.attribute)) : undefined;
    return references ? { ...f, options: { ...f.options, references } } : f;
  });
  return {
    remoteId: slug,
    name: object.plural_noun ?? object.singular_noun ?? slug,
    extras: {
      attioObjectId: object.id.object_id,
      unsupportedFields: attributes
        .filter((a) => !a.is_archived && !fields.some((f) => f.attribute.api_slug === a.api_slug))
        .map((a) => a.api_slug),
    },
    fields: fields.map(({ attribute: _a, part: _p, ...f }) => f),
  };
}

/**
 * Discovery of one list: a table named after the list (remote id `list:{api_slug}`) with the list's
 * attributes as fields and the entry's parent record as a linked record of the parent object's table.
 */
export function attioListTable(
  list: AttioList,
  attributes: AttioAttribute[],
  choices: Map<string, string[]>,
  objects: AttioObject[],
) {
  const parentSlug = list.parent_object[0] ?? '';
  const parent = objects.find((o) => o.api_slug === parentSlug || o.id.object_id === parentSlug);
  const asObject: AttioObject = {
    id: { object_id: list.id.list_id },
    api_slug: `${ATTIO_LIST_PREFIX}${list.api_slug}`,
    singular_noun: list.name ?? list.api_slug,
    plural_noun: list.name ?? list.api_slug,
  };
  const title = parent?.singular_noun ? `Parent ${parent.singular_noun.toLowerCase()}` : 'Parent record';
  const table = attioDiscoveredTable(
    asObject,
    [...attributes, parentAttribute(parentSlug, title)],
    choices,
    objects,
  );
  const { attioObjectId: _object, ...extras } = table.extras;
  return { ...table, extras: { ...extras, attioListId: list.id.list_id, attioParentObject: parentSlug } };
}

export function createAttioPort(settings: AttioSettings = {}) {
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'Attio OAuth client is not configured',
        'Signing in with Attio is not set up on this server (LOCKSTEP_ATTIO_CLIENT_ID and LOCKSTEP_ATTIO_CLIENT_SECRET). Use an API key instead.',
      );
    return { client_id: settings.clientId, client_secret: settings.clientSecret };
  };
  const oauthUrl = settings.oauthUrl ?? ATTIO_OAUTH_URL;
  return {
    type: 'attio' as const,
    /**
     * Attio's authorize page for this server's app (app.attio.com/authorize): the person picks the
     * workspace and approves the app's scopes (set on the app at build.attio.com). Attio documents
     * no PKCE: the state binds the answer to this sign-in.
     */
    authorizeUrl(input: { redirectUri: string; state: string }): string {
      const url = new URL('/authorize', oauthUrl);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', oauthClient().client_id);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('state', input.state);
      return url.toString();
    },
    /** The code for the workspace's access token (no refresh token: Attio's do not expire). */
    async exchangeCode(input: { code: string; redirectUri: string }): Promise<AttioItems> {
      const { accessToken } = await exchangeAttioCode(oauthUrl, {
        grant_type: 'authorization_code',
        code: input.code,
        ...oauthClient(),
        redirect_uri: input.redirectUri,
      });
      return { accessToken };
    },
    /** The token and its workspace (`GET /v2/self`): a cheap authenticated call. */
    async check(items: AttioItems): Promise<{ accountEmail: string | null }> {
      await attioSelf(clientFor(settings, items));
      return { accountEmail: null };
    },
    /** One base: the Attio workspace. */
    async listBases(items: AttioItems) {
      const self = await attioSelf(clientFor(settings, items));
      return [
        {
          remoteId: self.workspace_id,
          name: self.workspace_name ?? `Attio workspace ${self.workspace_slug ?? ''}`.trim(),
        },
      ];
    },
    /**
     * The workspace's webhook to `notificationUrl` for the record events of every object (so any
     * object a sync reads): kept while Attio still has it at that address, else made again
     * (`POST /v2/webhooks`; the secret comes back once, at creation). A webhook Lockstep made for
     * another address is deleted once the new one exists (best effort).
     */
    async ensureWebhook(
      items: AttioItems,
      _workspaceId: string,
      notificationUrl: string,
      known: AttioWebhook | null,
    ): Promise<AttioWebhook> {
      if (!notificationUrl.startsWith('https://'))
        throw new ConnectorError(
          'validation',
          `Attio webhook target ${notificationUrl} is not https`,
          "Attio sends webhooks to https addresses only: set LOCKSTEP_PUBLIC_URL to the server's public https address. Until then Attio's changes are picked up at each scheduled sync.",
        );
      const client = clientFor(settings, items);
      const path = (id: string) => `/v2/webhooks/${encodeURIComponent(id)}`;
      if (known?.secret && known.notificationUrl === notificationUrl) {
        try {
          const { body } = await client.request<{ data: { target_url?: string; status?: string } }>({
            method: 'GET',
            path: path(known.id),
          });
          if (body.data?.target_url === notificationUrl && body.data.status !== 'inactive') return known;
        } catch (error) {
          if (!(error instanceof ConnectorError) || error.code !== 'not_found') throw error;
          // Deleted in Attio: a new one below.
        }
      }
      const { body } = await client.request<{
        data: { id: { webhook_id: string }; secret?: string; target_url: string };
      }>({
        method: 'POST',
        path: '/v2/webhooks',
        body: {
          data: {
            target_url: notificationUrl,
            subscriptions: ATTIO_RECORD_EVENTS.map((event_type) => ({ event_type, filter: null })),
          },
        },
      });
      if (!body.data?.secret)
        throw new ConnectorError(
          'transient',
          'Attio made a webhook without a secret',
          attioUserMessage('transient'),
        );
      if (known && known.id !== body.data.id.webhook_id) {
        await client.request({ method: 'DELETE', path: path(known.id) }).catch(() => undefined);
      }
      return { id: body.data.id.webhook_id, secret: body.data.secret, notificationUrl };
    },
    /**
     * Every object of the workspace with its attributes (`GET /v2/objects`, then per object), then
     * every list (`GET /v2/lists`; left out when the token may not read lists).
     */
    async discoverSchema(items: AttioItems, _workspaceId: string) {
      const client = clientFor(settings, items);
      const { body } = await client.request<{ data: AttioObject[] }>({ method: 'GET', path: '/v2/objects' });
      const attributesOf = async (path: string) => {
        const attrs = (await client.request<{ data: AttioAttribute[] }>({ method: 'GET', path })).body.data;
        const choices = new Map<string, string[]>();
        for (const a of attrs) {
          if (a.is_archived || (a.type !== 'select' && a.type !== 'status')) continue;
          const kind = a.type === 'select' ? 'options' : 'statuses';
          const { body: opts } = await client.request<{ data: SelectOption[] }>({
            method: 'GET',
            path: `${path}/${encodeURIComponent(a.api_slug)}/${kind}`,
          });
          choices.set(
            a.api_slug,
            opts.data.filter((o) => !o.is_archived).map((o) => o.title),
          );
        }
        return { attrs, choices };
      };
      const tables = [];
      let lists: AttioList[] = [];
      try {
        lists = (await client.request<{ data: AttioList[] }>({ method: 'GET', path: '/v2/lists' })).body.data;
      } catch (error) {
        if (!(error instanceof ConnectorError && error.code === 'permission_denied')) throw error;
      }
      for (const object of body.data) {
        const slug = object.api_slug ?? object.id.object_id;
        const { attrs, choices } = await attributesOf(`/v2/objects/${encodeURIComponent(slug)}/attributes`);
        tables.push(attioDiscoveredTable(object, attrs, choices, body.data));
      }
      // Objects first, then lists.
      for (const list of lists) {
        const { attrs, choices } = await attributesOf(
          `/v2/lists/${encodeURIComponent(list.api_slug)}/attributes`,
        );
        tables.push(attioListTable(list, attrs, choices, body.data));
      }
      return tables;
    },
  };
}

export type AttioPort = ReturnType<typeof createAttioPort>;

/** The connector a run uses for one connection (tables are objects). */
export function createAttioRuntimeConnector(settings: AttioSettings, items: AttioItems): AttioConnector {
  return createAttioConnector({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
