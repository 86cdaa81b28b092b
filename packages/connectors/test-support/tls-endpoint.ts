import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

/** A self-signed certificate (PEM) for localhost and 127.0.0.1, made by openssl, and its key. */
export function selfSignedCertificate(commonName = 'localhost'): { certPem: string; keyPem: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tls-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      certPem: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
      keyPem: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type TlsEndpoint = {
  port: number;
  /** The endpoint's certificate, which is its own CA (self-signed). */
  caPem: string;
  /** TLS handshakes the client completed, having accepted the certificate. */
  handshakes(): number;
  close(): Promise<void>;
};

/**
 * A server speaking the start of PostgreSQL's TLS handshake with a self-signed certificate, on
 * 127.0.0.1: it answers the SSLRequest with 'S', completes TLS, then closes. Enough to see whether a
 * client accepted the certificate (a closed connection, counted in `handshakes`) or refused it (a
 * certificate error).
 */
export async function startTlsEndpoint(): Promise<TlsEndpoint> {
  const { certPem, keyPem } = selfSignedCertificate();
  let handshakes = 0;
  const server = net.createServer((socket) => {
    socket.once('data', () => {
      socket.write('S');
      const secure = new tls.TLSSocket(socket, { isServer: true, key: keyPem, cert: certPem });
      secure.on('secure', () => {
        handshakes++;
        secure.destroy();
      });
      secure.on('error', () => socket.destroy());
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    caPem: certPem,
    handshakes: () => handshakes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
