export type { PgConnectionItems } from './connection';
export { postgresqlPort } from './port';
export { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';
