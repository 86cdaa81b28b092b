import tls from 'node:tls';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { ConnectorError } from '../sdk/connector';
import { assertHostAllowed, guardedSocket, publicHostsOnly } from '../sdk/ssrf-guard';

export type PgConnectionItems = {
  connectionString?: string;
  host?: string;
  port?: string;
  database?: string;
  user?: string;
  password?: string;
  /**
   * TLS: `require` and `verify-full` check the server's certificate and host name (the system's
   * CAs and `sslRootCert`), `verify-ca` the certificate only, `no-verify` encrypts without checking
   * (the labelled opt-out), `disable` sends in clear. Unset: as the connection string says.
   */
  ssl?: 'disable' | 'require' | 'verify-ca' | 'verify-full' | 'no-verify';
  /** A CA certificate (PEM) the server's certificate may chain to, beside the system's. */
  sslRootCert?: string;
  /** How changes are found: triggers (the default, works everywhere) or logical decoding. */
  changeCapture?: 'triggers' | 'logical';
};

// Dates and timestamps stay strings: the engine normalises them without a local-time detour.
const RAW = (v: string) => v;
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 1082 || oid === 1114 || oid === 1184) return RAW;
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

/**
 * A pg.Client that survives its connection dropping (a server restart, pg_terminate_backend): pg
 * emits 'error' on such a client even while a pool has it checked out, and an unheard 'error'
 * crashes the process. The query in flight fails on its own, and the pool discards the client
 * (it is no longer queryable) when it is released.
 */
export class DropTolerantClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => {});
  }
}

/** How long a connection may take to be ready, unless told otherwise (a host that never answers). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export type PgTimeouts = {
  /** Connecting, TLS and signing in together; 10 s by default. 0 is refused (pg would wait forever). */
  connectMs?: number;
  /**
   * Each query, on both ends: statement_timeout on the server and query_timeout on the client (a
   * server that stops answering mid-query). For checks and schema discovery; none by default.
   */
  queryMs?: number;
};

const URL_SCHEMES = /^(postgres|postgresql|socket):/i;
const CONNECTION_STRING_FORM = 'Give it as postgres://user:password@host:5432/database.';

/**
 * A connection string read as pg reads it, refused with a message a user can act on when it cannot
 * be read (pg itself throws `TypeError: Invalid URL` from the Client constructor).
 */
export function parseConnectionString(connectionString: string): pg.ClientConfig {
  const text = connectionString.trim();
  if (!URL_SCHEMES.test(text) && !text.startsWith('/')) {
    throw new ConnectorError(
      'validation',
      'connection string has no postgres:// scheme',
      `The connection string must start with postgres:// or postgresql://. ${CONNECTION_STRING_FORM}`,
    );
  }
  try {
    return parseIntoClientConfig(text) as pg.ClientConfig;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConnectorError(
      'validation',
      `connection string is not valid: ${why}`,
      `The connection string is not valid (${why}). ${CONNECTION_STRING_FORM} Characters such as @, : or / in the password must be percent-encoded.`,
    );
  }
}

/**
 * The TLS options of a connection's items. `require` verifies too: it used to mean "encrypt, check
 * nothing", which let anyone on the path present any certificate; not checking is now `no-verify`,
 * chosen by name.
 */
export function tlsOptions(items: PgConnectionItems): pg.ClientConfig['ssl'] {
  const ca = items.sslRootCert?.trim() ? { ca: [...tls.rootCertificates, items.sslRootCert.trim()] } : {};
  switch (items.ssl) {
    case 'require':
    case 'verify-full':
      return { rejectUnauthorized: true, ...ca };
    case 'verify-ca':
      // The chain is checked; the name on the certificate is not (a server reached by another name).
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined, ...ca };
    case 'no-verify':
      return { rejectUnauthorized: false };
    case 'disable':
      return false;
    default:
      return undefined;
  }
}

/**
 * The pg config of a connection's items. Every connection has a connect timeout, connection strings
 * included (given to pg as a string they would bypass it, and the string's own query parameters
 * would override the query timeouts).
 */
export function poolConfig(items: PgConnectionItems, timeouts: PgTimeouts = {}): pg.PoolConfig {
  const ssl = tlsOptions(items);
  const connectMs =
    timeouts.connectMs && timeouts.connectMs > 0 ? timeouts.connectMs : DEFAULT_CONNECT_TIMEOUT_MS;
  const limits = {
    connectionTimeoutMillis: connectMs,
    // Outside local mode the host is resolved again at each connect, and refused if private now.
    ...(publicHostsOnly() ? { stream: () => guardedSocket() } : {}),
    ...(timeouts.queryMs && timeouts.queryMs > 0
      ? { query_timeout: timeouts.queryMs, statement_timeout: timeouts.queryMs }
      : {}),
  };
  // The pool's clients tolerate a dropped connection (the Client option is ignored by pg.Client).
  if (items.connectionString) {
    // As pg does with a connection string: what the string says wins over the ssl item.
    return {
      ssl,
      ...parseConnectionString(items.connectionString),
      types: TYPES,
      max: 4,
      Client: DropTolerantClient,
      ...limits,
    };
  }
  if (!items.host || !items.database || !items.user) {
    throw new ConnectorError(
      'validation',
      'missing connection items',
      'Give a connection string, or a host, database and user.',
    );
  }
  return {
    host: items.host,
    port: items.port ? Number(items.port) : 5432,
    database: items.database,
    user: items.user,
    password: items.password,
    ssl,
    types: TYPES,
    max: 4,
    Client: DropTolerantClient,
    ...limits,
  };
}

/** A connection or query that ran out of time (pg's client timers, or the server's statement_timeout). */
export function isTimeout(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === '57014' ||
    e?.code === 'ETIMEDOUT' ||
    /^(timeout expired|Connection terminated due to connection timeout|timeout exceeded when trying to connect|Query read timeout)$/.test(
      e?.message ?? '',
    )
  );
}

/**
 * The host pg will connect to, read as pg reads connection items: a `host` query parameter wins over
 * the URL's host, a `socket:` URL or a leading `/` is a socket directory, and nothing means localhost.
 */
export function connectionHost(items: PgConnectionItems): string {
  const text = items.connectionString?.trim();
  if (!text) return items.host || 'localhost';
  if (text.startsWith('/')) return text.split(' ')[0] as string;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConnectorError(
      'validation',
      'connection string is not a URL',
      'Give the connection string as postgres://user:password@host:5432/database.',
    );
  }
  if (url.protocol === 'socket:') return decodeURIComponent(url.pathname);
  return url.searchParams.get('host') || decodeURIComponent(url.hostname) || 'localhost';
}

/**
 * Refuses a database on Lockstep's own machine or private network (SSRF) unless private hosts are
 * allowed (local mode). Throws a ConnectorError with a message for the user.
 */
export async function assertPostgresqlHostAllowed(
  items: PgConnectionItems,
  options: { allowPrivate: boolean },
): Promise<void> {
  if (options.allowPrivate) return;
  await assertHostAllowed(connectionHost(items), { allowPrivate: false });
}

/** Node's TLS errors for a certificate that does not check out (as opposed to a network failure). */
const CERTIFICATE_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether a connection failed on the server's TLS certificate (not on the network or the database). */
export function isCertificateError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return typeof code === 'string' && CERTIFICATE_ERRORS.has(code);
}

/**
 * How an error is told to the user where the connection's kind knows better than PostgreSQL's
 * generic text: `certificateAdvice` says what to do about a certificate that does not check out
 * (Supabase's: set up its root CA), given Node's reason.
 */
export type PgErrorOptions = { certificateAdvice?: (reason: string) => string };

const defaultCertificateAdvice = (reason: string) =>
  `The database's TLS certificate could not be verified (${reason}). Give the CA certificate it chains to, or choose no-verify to encrypt without checking it (not safe on networks you do not control).`;

/** PostgreSQL errors in the connector error code set, with a text a user can act on. */
export function mapPgError(error: unknown, options: PgErrorOptions = {}): ConnectorError {
  const e = error as { code?: string; message?: string; column?: string; detail?: string };
  const message = e.message ?? String(error);
  if (isTimeout(error) && e.code !== '57014') {
    return new ConnectorError(
      'transient',
      `timeout: ${message}`,
      'The database did not answer in time. Check the host and port, and that a PostgreSQL server listens there.',
    );
  }
  if (isCertificateError(error)) {
    return new ConnectorError(
      'validation',
      `certificate not verified: ${message}`,
      (options.certificateAdvice ?? defaultCertificateAdvice)(message),
    );
  }
  switch (e.code) {
    case '28P01':
    case '28000':
      return new ConnectorError('auth_invalid', message, 'PostgreSQL refused the user name or password.');
    case '42501':
      return new ConnectorError(
        'permission_denied',
        message,
        `The database user may not do this: ${message}.`,
      );
    case '42P01':
    case '42703':
    case '3D000':
      // A table or column dropped or renamed under a live sync: the user must act, not a retry.
      return new ConnectorError('not_found', message, `Not found in the database: ${message}.`);
    case 'P0002':
      return new ConnectorError('not_found', message, `The row is no longer in the database (${message}).`);
    case '23505':
      return new ConnectorError(
        'validation',
        message,
        `A unique value is already taken${e.detail ? `: ${e.detail}` : ''}.`,
      );
    case '23502':
      return new ConnectorError(
        'validation',
        message,
        `"${e.column ?? 'A column'}" needs a value in the database.`,
      );
    case '23514':
    case '22P02':
    case '22001':
    case '22003':
    case '22007':
    case '22008':
    case '23503':
      return new ConnectorError('validation', message, `The database refused the value: ${message}.`);
    case '42P07':
    case '42701':
    case '42710':
      // A table, column or other object of that name exists (schema generation): not worth a retry.
      return new ConnectorError('validation', message, `The database refused the change: ${message}.`);
    case '57014':
      return new ConnectorError('transient', message, 'The database took too long to answer.');
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
      return new ConnectorError(
        'transient',
        message,
        'The database could not be reached. Check the host and port.',
      );
    default:
      return new ConnectorError('transient', message, `The database failed: ${message}.`);
  }
}

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const qualified = (table: string) => {
  const dot = table.indexOf('.');
  return dot < 0
    ? quoteIdent(table)
    : `${quoteIdent(table.slice(0, dot))}.${quoteIdent(table.slice(dot + 1))}`;
};
