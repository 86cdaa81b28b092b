import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresqlConnector } from '../postgresql/postgresql-connector';
import { ConnectorError } from '../sdk/connector';
import { selfSignedCertificate, startTlsEndpoint, type TlsEndpoint } from '../test-support/tls-endpoint';
import {
  createSupabasePort,
  SUPABASE_DATABASE_ERRORS,
  type SupabaseItems,
  supabaseDatabaseItems,
} from './port';

// Issue 18 item 9, Supabase's part: TLS to a project's database encrypted without checking the
// certificate (ssl `require` was sent to PostgreSQL as no-verify), as Supabase's root CA is not in
// the system's trust store. It now verifies the certificate and host name, against the system's CAs,
// the operator's Supabase root CA (LOCKSTEP_SUPABASE_ROOT_CA) and the connection's own sslRootCert;
// no-verify is the labelled opt-out. Against a server speaking PostgreSQL's TLS handshake with a
// self-signed certificate (the same as tls-verify.test.ts), standing for a Supabase database.
let endpoint: TlsEndpoint;
/** The Management API, as much as `check` needs: the token works (no organizations). */
let api: http.Server;
let apiUrl = '';

beforeAll(async () => {
  endpoint = await startTlsEndpoint();
  api = http.createServer((req, res) => {
    res.writeHead(req.url === '/v1/organizations' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(req.url === '/v1/organizations' ? '[]' : '{"message":"not found"}');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  await endpoint.close();
  await new Promise<void>((resolve) => api.close(() => resolve()));
});

/** A connection whose database role is set up, as `ensureAccess` leaves it (the role's URL has no sslmode). */
const connection = (extra: SupabaseItems = {}): SupabaseItems => ({
  accessToken: 'sbp_test',
  projectRef: 'abcdefghijklmnop',
  roleName: 'lockstep_test',
  schemas: '["public"]',
  connectionString: `postgresql://lockstep_test:secret@localhost:${endpoint.port}/postgres`,
  ssl: 'require',
  ...extra,
});

/** What checking the connection ends in, and whether the TLS handshake went through. */
async function check(items: SupabaseItems, rootCa?: string) {
  const port = createSupabasePort({ apiUrl, allowPrivateHosts: true, ...(rootCa ? { rootCa } : {}) });
  const before = endpoint.handshakes();
  const error = await port.check(items).then(
    () => null,
    (e: unknown) => e,
  );
  return { error, handshook: endpoint.handshakes() === before + 1 };
}

const INSTRUCTIONS =
  /could not be verified.*Download certificate.*"CA certificate" field.*LOCKSTEP_SUPABASE_ROOT_CA.*Encrypt without checking the certificate.*no-verify/;

describe('TLS to a Supabase database', () => {
  it('verifies by default: a connection stored with require refuses a certificate it cannot check, saying what to do', async () => {
    for (const ssl of ['require', 'verify-full', undefined]) {
      const items = connection();
      if (ssl) items.ssl = ssl;
      else delete items.ssl;
      const { error, handshook } = await check(items);
      expect(handshook, String(ssl)).toBe(false);
      expect(error, String(ssl)).toBeInstanceOf(ConnectorError);
      const e = error as ConnectorError;
      expect(e.code).toBe('validation');
      expect(e.message).toMatch(/certificate not verified: self-signed certificate/);
      expect(e.userFacingMessage).toMatch(INSTRUCTIONS);
    }
    expect(supabaseDatabaseItems(connection())).toEqual({
      connectionString: connection().connectionString,
      ssl: 'verify-full',
    });
  });

  it("passes TLS with Supabase's root CA from the operator (LOCKSTEP_SUPABASE_ROOT_CA)", async () => {
    const { error, handshook } = await check(connection(), endpoint.caPem);
    expect(handshook).toBe(true);
    // The endpoint closes after TLS: what is left is not about the certificate.
    expect((error as Error).message).not.toMatch(/certificate/i);
  });

  it("passes TLS with the CA pasted into the connection's CA certificate field, beside the operator's", async () => {
    expect((await check(connection({ sslRootCert: endpoint.caPem }))).handshook).toBe(true);
    // Another CA from the operator does not stand in the way of the connection's own.
    const other = selfSignedCertificate('Another CA').certPem;
    expect((await check(connection({ sslRootCert: endpoint.caPem }), other)).handshook).toBe(true);
    expect((await check(connection(), other)).handshook).toBe(false);
  });

  it('encrypts without checking only when no-verify is chosen', async () => {
    const { error, handshook } = await check(connection({ ssl: 'no-verify' }));
    expect(handshook).toBe(true);
    expect((error as Error).message).not.toMatch(/certificate/i);
    // disable, the simulator's (it has no TLS), is still sent in clear.
    expect(supabaseDatabaseItems(connection({ ssl: 'disable' })).ssl).toBe('disable');
  });

  it('says the same in runs (the PostgreSQL connector on the Supabase database)', async () => {
    const connector = createPostgresqlConnector(
      supabaseDatabaseItems(connection()),
      SUPABASE_DATABASE_ERRORS,
    );
    try {
      const error = await connector.read('public.items', null, { pageSize: 10 }).then(
        () => null,
        (e: unknown) => e as ConnectorError,
      );
      expect(error?.userFacingMessage).toMatch(INSTRUCTIONS);
    } finally {
      await connector.end();
    }
    const trusted = createPostgresqlConnector(
      supabaseDatabaseItems(connection(), { rootCa: endpoint.caPem }),
      SUPABASE_DATABASE_ERRORS,
    );
    const before = endpoint.handshakes();
    try {
      await trusted.read('public.items', null, { pageSize: 10 }).catch(() => {});
      expect(endpoint.handshakes()).toBe(before + 1);
    } finally {
      await trusted.end();
    }
  });
});
