export {
  isPipedriveOAuth,
  PIPEDRIVE_OAUTH_URL,
  pipedriveSession,
  type SavePipedriveItems,
} from './oauth';
export {
  createPipedriveClient,
  mapPipedriveError,
  PIPEDRIVE_API_URL,
  PIPEDRIVE_BURST_LIMIT,
  PIPEDRIVE_BURST_WINDOW_MS,
  PIPEDRIVE_RATE_LIMIT,
  type PipedriveClient,
  type PipedriveClientOptions,
  pipedriveCurrentUser,
  pipedriveRateLimitStore,
} from './pipedrive-api';
export {
  choiceOptions,
  fetchPipedriveChoices,
  type PipedriveChoiceKind,
  type PipedriveChoices,
  type PipedriveOption,
} from './pipedrive-choices';
export {
  createPipedriveConnector,
  customFieldType,
  entityTypeOf,
  fromCanonical,
  isCustomKey,
  PIPEDRIVE_CAPABILITIES,
  PIPEDRIVE_ENTITY_TYPES,
  PIPEDRIVE_MAX_PAGE_SIZE,
  PIPEDRIVE_READ_OVERLAP_MS,
  type PipedriveConnector,
  type PipedriveConnectorOptions,
  type PipedriveEntityType,
  type PipedriveField,
  type PipedriveFieldDef,
  pipedriveFields,
  toCanonical,
  withPrimary,
} from './pipedrive-connector';
export {
  createPipedrivePort,
  createPipedriveRuntimeConnector,
  type PipedriveItems,
  type PipedrivePort,
  type PipedriveSettings,
  type PipedriveWebhook,
  pipedriveDiscoveredTable,
} from './port';
export {
  PIPEDRIVE_EVENT_OBJECTS,
  PIPEDRIVE_WEBHOOK_RETRY_WINDOW_MS,
  PIPEDRIVE_WEBHOOK_USER,
  type PipedriveWebhookEvent,
  parsePipedriveWebhook,
  verifyPipedriveBasicAuth,
} from './webhooks';
