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

/** Where a connection goes: the backing server, and what its startup packet says there. */
export type PgRoute = { host: string; port: number; database: string; user?: string };

/**
 * A proxy to one backing database (the project's direct host), or, with a `route` function, to the
 * database the startup packet's parameters choose (Supavisor's shared pooler picks the project by the
 * user name `<role>.<project ref>`): null refuses the connection as Supavisor does.
 */
export async function startPgProxy(
  target: PgRoute | ((params: Map<string, string>) => PgRoute | null),
): Promise<PgProxy> {
  const routeOf = typeof target === 'function' ? target : () => target;
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
        const route = code === PROTOCOL_3 ? routeOf(startupParams(packet)) : routeOf(new Map());
        if (!route) {
          client.end(fatal('XX000', 'Tenant or user not found'));
          return;
        }
        client.pause();
        const upstream = connect(route.port, route.host);
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('connect', () => {
          upstream.write(code === PROTOCOL_3 ? rewriteStartup(packet, route) : packet);
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

/** The parameters of a startup packet (user, database, options, ...). */
function startupParams(packet: Buffer): Map<string, string> {
  const params = new Map<string, string>();
  let at = 8;
  while (at < packet.length) {
    const keyEnd = packet.indexOf(0, at);
    if (keyEnd <= at) break;
    const valueEnd = packet.indexOf(0, keyEnd + 1);
    if (valueEnd < 0) break;
    params.set(packet.toString('utf8', at, keyEnd), packet.toString('utf8', keyEnd + 1, valueEnd));
    at = valueEnd + 1;
  }
  return params;
}

/** The startup packet with the route's database (and user, for the pooler) in place of the client's. */
function rewriteStartup(packet: Buffer, route: PgRoute): Buffer {
  const params = startupParams(packet);
  params.set('database', route.database);
  if (route.user !== undefined) params.set('user', route.user);
  const body = Buffer.concat([
    ...[...params].flatMap(([k, v]) => [Buffer.from(`${k}\0`), Buffer.from(`${v}\0`)]),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([head, body]);
}

/** A FATAL ErrorResponse message, as a server refusing a connection sends it. */
function fatal(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0`), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}
