export {
  ALL_CAPABILITIES,
  type Capability,
  type DatabaseState,
  type DataSourceState,
  DEFAULT_TOKEN,
  KNOWN_VERSIONS,
  MAX_PAGE_SIZE,
  NOTION_VERSION,
  type NotionSimulatorOptions,
  type NotionSimulatorServer,
  NotionState,
  normalizeId,
  type PageState,
  type PropertyDef,
  QUERY_RESULT_LIMIT,
  RATE_LIMIT_BURST,
  RATE_LIMIT_PER_SECOND,
  startNotionServer,
  WEBHOOK_MAX_ATTEMPTS,
  type WebhookEvent,
  type WebhookSubscription,
} from './notion-simulator.ts';
export {
  NotionApiError,
  PAGE_REFERENCE_LIMIT,
  type PropertySchema,
  type PropertyType,
  RELATION_MAX,
  RICH_TEXT_ARRAY_MAX,
  RICH_TEXT_CONTENT_MAX,
  type RichText,
} from './properties.ts';
export { type NotionSeed, seedWorkspace } from './seed.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  type ActorKind,
  DEFAULT_TOKEN,
  type NotionSimulatorOptions,
  NotionState,
  type PageState,
  startNotionServer,
  type WebhookSubscription,
} from './notion-simulator.ts';
import { type NotionSeed, seedWorkspace } from './seed.ts';

export type StartNotionSimulatorOptions = NotionSimulatorOptions & {
  /** Seed the People/Companies workspace (default true); a number of people may be given. */
  seed?: boolean | { people?: number };
};

export type NotionSimulator = {
  /** Base URL: point the connector's `https://api.notion.com` here. */
  url: string;
  /** The internal integration token (`ntn_...`), with every capability and access to every data source. */
  token: string;
  /** Ids of the seeded workspace, when seeded. */
  workspace: NotionSeed | undefined;
  /** In-memory state: users, databases, data sources, pages, tokens, webhook subscriptions. */
  state: NotionState;
  /** Edits as a person in the Notion app would make them (webhook author: person). */
  createPage: (dataSource: string, values: Record<string, unknown>, actor?: ActorKind) => PageState;
  editPage: (pageId: string, values: Record<string, unknown>, actor?: ActorKind) => PageState;
  trashPage: (pageId: string, actor?: ActorKind) => PageState;
  restorePage: (pageId: string, actor?: ActorKind) => PageState;
  /** A page as the API returns it. */
  pageJson: (pageId: string) => Record<string, unknown>;
  revokeToken: (token: string) => void;
  webhooks: {
    /** Creates a subscription (as in the integration settings) and POSTs the verification token to `url`. */
    subscribe: (options: { url: string; eventTypes?: string[] }) => Promise<WebhookSubscription>;
    /** Pastes the verification token back: events flow from now on. */
    verify: (subscriptionId: string, token: string) => void;
    /** Delivers every pending event and waits for the deliveries. */
    flush: () => Promise<void>;
  };
  /** Queues Notion's 529 `service_overload` (with Retry-After) for the next `count` requests. */
  overload: (count?: number, retryAfterSeconds?: number) => void;
  faults: FaultInjector;
  requestLog: RequestLog;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startNotionSimulator(
  options: StartNotionSimulatorOptions = {},
): Promise<NotionSimulator> {
  const state = new NotionState(options);
  const workspace =
    options.seed === false
      ? undefined
      : seedWorkspace(state, typeof options.seed === 'object' ? options.seed : {});
  const server = await startNotionServer(state);
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    workspace,
    state,
    createPage: (ds, values, actor) => state.createPage(ds, values, actor),
    editPage: (id, values, actor) => state.editPage(id, values, actor),
    trashPage: (id, actor) => state.trashPage(id, actor),
    restorePage: (id, actor) => state.restorePage(id, actor),
    pageJson: (id) => state.pageJson(state.page(id)),
    revokeToken: (t) => state.revokeToken(t),
    webhooks: {
      subscribe: (o) => state.subscribe(o),
      verify: (id, token) => state.verifySubscription(id, token),
      flush: () => state.flushWebhooks(),
    },
    overload: (count = 1, retryAfterSeconds = 1) => {
      const r = state.serviceOverloadResponse(retryAfterSeconds);
      server.faults.next({
        status: r.status,
        body: r.body,
        ...(r.headers ? { headers: r.headers } : {}),
        count,
      });
    },
    faults: server.faults,
    requestLog: server.requestLog,
    clock: state.clock,
    close: server.close,
  };
}
