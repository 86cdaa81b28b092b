export { FULL_NAME, FULL_NAME_PARTS, joinName, splitName } from './full-name';
export {
  createHubSpotClient,
  existingIdOf,
  HUBSPOT_API_URL,
  HUBSPOT_PER_TEN_SECONDS,
  HUBSPOT_RATE_LIMIT,
  HUBSPOT_RATE_LIMIT_WAIT_MS,
  HUBSPOT_SEARCH_PER_SECOND,
  type HubSpotClient,
  type HubSpotClientOptions,
  hubspotAccount,
  hubspotRateLimitStore,
  mapHubSpotError,
} from './hubspot-api';
export {
  canonicalType,
  createHubSpotConnector,
  fromCanonical,
  HUBSPOT_BATCH_SIZE,
  HUBSPOT_CAPABILITIES,
  HUBSPOT_MAX_PAGE_SIZE,
  HUBSPOT_OBJECT_TYPES,
  HUBSPOT_READ_OVERLAP_MS,
  HUBSPOT_SEARCH_RESULT_CAP,
  type HubSpotConnector,
  type HubSpotConnectorOptions,
  type HubSpotField,
  type HubSpotProperty,
  hubspotFields,
  isReadOnly,
  lastModifiedProperty,
  toCanonical,
} from './hubspot-connector';
export {
  createHubSpotPort,
  createHubSpotRuntimeConnector,
  type HubSpotItems,
  type HubSpotPort,
  type HubSpotSettings,
  hubspotDiscoveredTable,
} from './port';
export {
  HUBSPOT_WEBHOOK_MAX_AGE_MS,
  HUBSPOT_WEBHOOK_READ_DELAY_S,
  type HubSpotWebhookEvent,
  parseHubSpotWebhook,
  verifyHubSpotSignatureV3,
} from './webhooks';
