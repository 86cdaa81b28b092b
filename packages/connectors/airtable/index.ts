export {
  AIRTABLE_BATCH_SIZE,
  AIRTABLE_MAX_PAGE_SIZE,
  type AirtableConnector,
  type AirtableConnectorOptions,
  type AirtableField,
  type AirtableTable,
  canonicalType,
  createAirtableConnector,
  fromCanonical,
  isReadOnly,
  toCanonical,
  verifyAirtableNotification,
} from './airtable-connector';
