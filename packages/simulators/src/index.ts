export {
  type AffinitySimulator,
  AffinityState,
  DEFAULT_TOKEN as AFFINITY_DEFAULT_TOKEN,
  type StartAffinitySimulatorOptions,
  startAffinitySimulator,
} from './affinity/index.ts';
export {
  type AirtableSimulator,
  AirtableState,
  DEFAULT_TOKEN as AIRTABLE_DEFAULT_TOKEN,
  type StartAirtableSimulatorOptions,
  seedCrm,
  startAirtableSimulator,
} from './airtable/index.ts';
export {
  type AttioSimulator,
  AttioState,
  DEFAULT_TOKEN as ATTIO_DEFAULT_TOKEN,
  type StartAttioSimulatorOptions,
  startAttioSimulator,
} from './attio/index.ts';
export {
  DRIVE_TOKEN as GOOGLE_SHEETS_DRIVE_TOKEN,
  type GoogleSheetsSimulator,
  GoogleSheetsState,
  SCOPES as GOOGLE_SHEETS_SCOPES,
  type StartGoogleSheetsSimulatorOptions,
  seedSales,
  startGoogleSheetsSimulator,
} from './google-sheets/index.ts';
export {
  type Clock,
  type Fault,
  FaultInjector,
  ManualClock,
  RequestLog,
  type SimRequest,
  type SimResponse,
  startHttpServer,
  systemClock,
  TokenRegistry,
} from './http.ts';
export {
  ALL_SCOPES as HUBSPOT_ALL_SCOPES,
  DEFAULT_TOKEN as HUBSPOT_DEFAULT_TOKEN,
  HUBSPOT_ACCESS_TOKEN_TTL_SECONDS,
  HUBSPOT_DEFAULT_OAUTH_APP,
  type HubSpotCrmSeed,
  type HubSpotOAuthApp,
  type HubSpotSimulator,
  HubSpotState,
  type StartHubSpotSimulatorOptions,
  seedHubSpotCrm,
  signatureV3 as hubspotSignatureV3,
  startHubSpotSimulator,
} from './hubspot/index.ts';
export {
  DEFAULT_TOKEN as MEMBERSTACK_DEFAULT_TOKEN,
  type MemberstackSimulator,
  MemberstackState,
  type StartMemberstackSimulatorOptions,
  startMemberstackSimulator,
} from './memberstack/index.ts';
export {
  type NotionSimulator,
  NotionState,
  seedWorkspace as seedNotionWorkspace,
  startNotionSimulator,
} from './notion/index.ts';
export {
  DEFAULT_OAUTH_CLIENT as PIPEDRIVE_DEFAULT_OAUTH_CLIENT,
  DEFAULT_TOKEN as PIPEDRIVE_DEFAULT_TOKEN,
  type PipedriveCrmSeed,
  type PipedriveSimulator,
  PipedriveState,
  type StartPipedriveSimulatorOptions,
  seedPipedriveCrm,
  startPipedriveSimulator,
} from './pipedrive/index.ts';
export {
  DEFAULT_TOKEN as SALESFORCE_DEFAULT_TOKEN,
  type SalesforceSimulator,
  SalesforceState,
  type StartSalesforceSimulatorOptions,
  startSalesforceSimulator,
} from './salesforce/index.ts';
export {
  type ConnectedAccount as StripeConnectedAccount,
  DEFAULT_CONNECT_CLIENT_ID as STRIPE_DEFAULT_CONNECT_CLIENT_ID,
  DEFAULT_TOKEN as STRIPE_DEFAULT_TOKEN,
  type StartStripeSimulatorOptions,
  type StripeSimulator,
  StripeState,
  signPayload as stripeSignature,
  startStripeSimulator,
} from './stripe/index.ts';
export {
  DEFAULT_CLIENT as SUPABASE_DEFAULT_CLIENT,
  DEFAULT_PAT as SUPABASE_DEFAULT_PAT,
  type SupabaseSimulator,
  type SupabaseSimulatorOptions,
  startSupabaseSimulator,
} from './supabase/index.ts';
export {
  DEFAULT_TOKEN as WEBFLOW_DEFAULT_TOKEN,
  type StartWebflowSimulatorOptions,
  startWebflowSimulator,
  type WebflowSimulator,
  WebflowState,
} from './webflow/index.ts';
