export {
  type AirtableSimulatorOptions,
  type AirtableSimulatorServer,
  AirtableState,
  ALL_SCOPES,
  ApiError,
  ATTACHMENT_URL_HOST,
  ATTACHMENT_URL_TTL_MS,
  type BaseDef,
  type BaseState,
  DEFAULT_ITERATOR_TTL_MS,
  DEFAULT_TOKEN,
  type FieldDef,
  MAX_PAGE_SIZE,
  MAX_RECORDS_PER_WRITE,
  RATE_LIMIT_PENALTY_MS,
  RATE_LIMIT_PER_BASE_PER_SECOND,
  type RecordState,
  startAirtableServer,
  type TableDef,
  type TableState,
  WEBHOOK_LIFETIME_MS,
  type WebhookPayload,
  type WebhookState,
} from './airtable-simulator.ts';
export { FIELD_TYPES, type FieldState, type FieldType, READ_ONLY_TYPES } from './fields.ts';
export { CRM_BASE, CRM_BASE_NAME, type CrmSeed, seedCrm } from './seed.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  type AirtableSimulatorOptions,
  AirtableState,
  DEFAULT_TOKEN,
  startAirtableServer,
} from './airtable-simulator.ts';
import { type CrmSeed, seedCrm } from './seed.ts';

export type StartAirtableSimulatorOptions = AirtableSimulatorOptions & {
  /** Seed the CRM base (default true); a number sets how many contacts. */
  seed?: boolean | { contacts?: number };
};

export type AirtableSimulator = {
  /** Base URL: point the connector's `https://api.airtable.com` here. */
  url: string;
  /** The bearer token that works for every base and scope. */
  token: string;
  /** The CRM seed's ids, when seeded. */
  crm: CrmSeed | undefined;
  /** In-memory state: bases, out-of-band edits (as a person in Airtable would), tokens. */
  state: AirtableState;
  /** Seed another CRM base. */
  seed: (options?: { contacts?: number }) => CrmSeed;
  /** Out-of-band edits with webhook source 'client'. */
  mutateRecord: AirtableState['updateRecord'];
  createRecord: AirtableState['createRecord'];
  deleteRecord: AirtableState['deleteRecord'];
  revokeToken: (token: string) => void;
  /** Resolves once every webhook notification ping sent so far has been delivered. */
  flushNotifications: () => Promise<void>;
  faults: FaultInjector;
  requestLog: RequestLog;
  clock: Clock;
  close: () => Promise<void>;
};

export async function startAirtableSimulator(
  options: StartAirtableSimulatorOptions = {},
): Promise<AirtableSimulator> {
  const state = new AirtableState(options);
  const crm =
    options.seed === false ? undefined : seedCrm(state, typeof options.seed === 'object' ? options.seed : {});
  const server = await startAirtableServer(state);
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    crm,
    state,
    seed: (o) => seedCrm(state, o),
    mutateRecord: state.updateRecord.bind(state),
    createRecord: state.createRecord.bind(state),
    deleteRecord: state.deleteRecord.bind(state),
    revokeToken: (t) => state.tokens.revoke(t),
    flushNotifications: () => state.flushNotifications(),
    faults: server.faults,
    requestLog: server.requestLog,
    clock: state.clock,
    close: server.close,
  };
}
