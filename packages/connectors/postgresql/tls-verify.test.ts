import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsEndpoint, type TlsEndpoint } from '../test-support/tls-endpoint';
import { mapPgError, type PgConnectionItems, poolConfig } from './connection';

// Issue 18 item 9: `require` used to encrypt without checking the certificate, so anyone on the
// path could present any certificate. Against a server speaking PostgreSQL's TLS handshake with a
// self-signed certificate: require and verify-full refuse it (with a text saying what to do),
// the server's own CA makes it pass, and no-verify (the labelled opt-out) does not check it.
let endpoint: TlsEndpoint;
let port = 0;
let caPem = '';
const handshakes = () => endpoint.handshakes();

beforeAll(async () => {
  endpoint = await startTlsEndpoint();
  port = endpoint.port;
  caPem = endpoint.caPem;
});
afterAll(() => endpoint.close());

/** What connecting with these TLS items ends in: the error's code and message. */
async function connectWith(items: Partial<PgConnectionItems>) {
  const config = poolConfig({ host: 'localhost', port: String(port), database: 'x', user: 'x', ...items });
  const client = new pg.Client({ ...config, connectionTimeoutMillis: 5_000 } as pg.ClientConfig);
  try {
    await client.connect();
    return { code: 'connected', message: '' };
  } catch (e) {
    return { code: (e as { code?: string }).code ?? 'none', message: (e as Error).message, error: e };
  } finally {
    await client.end().catch(() => {});
  }
}

describe('TLS to PostgreSQL', () => {
  it('refuses a certificate it cannot verify under require and verify-full, saying what to do', async () => {
    for (const ssl of ['require', 'verify-full'] as const) {
      const before = handshakes();
      const r = await connectWith({ ssl });
      expect(r.code, ssl).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
      expect(handshakes(), ssl).toBe(before);
      expect(mapPgError(r.error).userFacingMessage).toMatch(
        /could not be verified.*CA certificate.*no-verify/,
      );
    }
  });

  it("accepts it once given the server's CA, and verify-ca does not check the host name", async () => {
    const before = handshakes();
    expect((await connectWith({ ssl: 'verify-full', sslRootCert: caPem })).code).not.toMatch(/CERT/);
    expect(handshakes()).toBe(before + 1);
    // The certificate names localhost; reached as 127.0.0.1 through verify-ca it still passes.
    const byAddress = poolConfig({
      host: '127.0.0.1',
      port: String(port),
      database: 'x',
      user: 'x',
      ssl: 'verify-ca',
      sslRootCert: caPem,
    });
    const client = new pg.Client(byAddress as pg.ClientConfig);
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e as { code?: string },
    );
    await client.end().catch(() => {});
    expect(error?.code ?? 'connected').not.toMatch(/CERT|ALTNAME/);
    expect(handshakes()).toBe(before + 2);
  });

  it('encrypts without checking only when no-verify is chosen by name', async () => {
    const before = handshakes();
    expect((await connectWith({ ssl: 'no-verify' })).code).not.toMatch(/CERT/);
    expect(handshakes()).toBe(before + 1);
  });
});
