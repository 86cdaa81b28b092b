export {
  ATTIO_API_URL,
  ATTIO_RATE_LIMIT,
  ATTIO_RATE_LIMIT_WAIT_MS,
  ATTIO_READS_PER_SECOND,
  ATTIO_WRITES_PER_SECOND,
  type AttioClient,
  type AttioClientOptions,
  attioRateLimitStore,
  attioRetryAfterMs,
  attioSelf,
  createAttioClient,
  mapAttioError,
} from './attio-api';
export {
  ATTIO_BATCH_SIZE,
  ATTIO_CAPABILITIES,
  ATTIO_MAX_PAGE_SIZE,
  type AttioConnector,
  type AttioConnectorOptions,
  type AttioObject,
  type AttioRecord,
  createAttioConnector,
  fingerprint,
  packKnown,
  unpackKnown,
} from './attio-connector';
export {
  type AttioAttribute,
  type AttioField,
  type AttioValue,
  attioFields,
  canonicalType,
  fromCanonical,
  isReadOnly,
  toCanonical,
} from './attio-values';
export {
  type AttioItems,
  type AttioPort,
  type AttioSettings,
  type AttioWebhook,
  attioDiscoveredTable,
  createAttioPort,
  createAttioRuntimeConnector,
} from './port';
export {
  ATTIO_RECORD_EVENTS,
  ATTIO_WEBHOOK_RETRY_WINDOW_MS,
  type AttioWebhookDelivery,
  attioDeliveryId,
  parseAttioWebhook,
  verifyAttioSignature,
} from './webhooks';
