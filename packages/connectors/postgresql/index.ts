export { assertPostgresqlHostAllowed, type PgConnectionItems } from './connection';
export { addColumns, createTables, type NewColumn } from './create-schema';
export { postgresqlPort } from './port';
export { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';
