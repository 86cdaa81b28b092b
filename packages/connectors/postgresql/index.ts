export {
  assertPostgresqlHostAllowed,
  DropTolerantClient,
  type PgConnectionItems,
  poolConfig,
} from './connection';
export { addColumns, createTables, type NewColumn } from './create-schema';
export {
  assertLogicalDecodingAvailable,
  pumpDecodedChanges,
  releaseLogicalCapture,
} from './logical-decoding';
export { postgresqlPort } from './port';
export { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';
