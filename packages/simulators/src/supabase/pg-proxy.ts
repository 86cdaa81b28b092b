/**
 * A PostgreSQL wire-protocol proxy that stands in for one Supabase project's database host: it
 * answers "no" to SSL/GSS encryption requests, rewrites the database named in the startup packet
 * (clients ask for `postgres`, as on Supabase) to the database that backs the project, then pipes
 * bytes both ways. Authentication and everything after it are the real PostgreSQL's.
 */
import { connect, createServer, type Socket } from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3 = 196608;

export type PgProxy = { host: string; port: number; close: () => Promise<void> };

export async function startPgProxy(target: {
  host: string;
  port: number;
  database: string;
}): Promise<PgProxy> {
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);

    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (length < 8 || length > 10_000) {
          client.destroy();
          return;
        }
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        const packet = buffered.subarray(0, length);
        const rest = buffered.subarray(length);
        buffered = Buffer.alloc(0);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // Not encrypted: the client goes on with a plain startup packet.
          client.write('N');
          buffered = Buffer.from(rest);
          continue;
        }
        client.off('data', onData);
        client.pause();
        const upstream = connect(target.port, target.host);
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('connect', () => {
          upstream.write(code === PROTOCOL_3 ? rewriteStartup(packet, target.database) : packet);
          if (rest.length) upstream.write(rest);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        return;
      }
    };
    client.on('data', onData);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    host: '127.0.0.1',
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The startup packet with `database` set to the backing database (a cancel request passes as is). */
function rewriteStartup(packet: Buffer, database: string): Buffer {
  const params: [string, string][] = [];
  let at = 8;
  while (at < packet.length) {
    const keyEnd = packet.indexOf(0, at);
    if (keyEnd <= at) break;
    const key = packet.toString('utf8', at, keyEnd);
    const valueEnd = packet.indexOf(0, keyEnd + 1);
    if (valueEnd < 0) break;
    params.push([key, packet.toString('utf8', keyEnd + 1, valueEnd)]);
    at = valueEnd + 1;
  }
  const rewritten = params.some(([k]) => k === 'database')
    ? params.map(([k, v]): [string, string] => (k === 'database' ? [k, database] : [k, v]))
    : [...params, ['database', database] as [string, string]];
  const body = Buffer.concat([
    ...rewritten.flatMap(([k, v]) => [Buffer.from(`${k}\0`), Buffer.from(`${v}\0`)]),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([head, body]);
}
