export {
  assertPostgresqlHostAllowed,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DropTolerantClient,
  isCertificateError,
  type PgConnectionItems,
  type PgErrorOptions,
  type PgTimeouts,
  parseConnectionString,
  poolConfig,
  tlsOptions,
} from './connection';
export { addColumns, createTables, type NewColumn } from './create-schema';
export {
  assertLogicalDecodingAvailable,
  pumpDecodedChanges,
  releaseLogicalCapture,
} from './logical-decoding';
export {
  createPostgresqlPort,
  DEFAULT_PORT_QUERY_TIMEOUT_MS,
  type PostgresqlPort,
  postgresqlPort,
} from './port';
export { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';
