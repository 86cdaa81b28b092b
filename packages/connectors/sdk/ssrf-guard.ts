import { lookup as dnsLookupCallback, type LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction, Socket } from 'node:net';
import { ConnectorError } from './connector';

/** Why an address is refused; null for an ordinary public address. */
export type PrivateAddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'shared'
  | 'unique_local'
  | 'multicast'
  | 'reserved';

const RANGES: [kind: PrivateAddressKind, network: string, prefix: number, family: 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  // Includes 169.254.169.254, the cloud metadata service.
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  // The documentation ranges (TEST-NET-1, -2, -3): never a real host.
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unique_local', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
];

const LISTS = RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list };
});

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (h: string | undefined) => (h ? h.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const groups =
    halves.length === 2 ? [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

const dottedOf = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * The IPv4 address an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d, deprecated but still routed by some stacks to the IPv4 address), NAT64 (64:ff9b::/96)
 * and 6to4 (2002:AABB:CCDD::/48). Checked as that IPv4 address, so [::127.0.0.1] is loopback.
 */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g5 === 0xffff) return dottedOf(g6, g7);
  // :: and ::1 keep their IPv6 meaning (unspecified, loopback).
  if (zeroTo(6) && (g6 !== 0 || g7 > 1)) return dottedOf(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dottedOf(g6, g7);
  if (g0 === 0x2002) return dottedOf(g1, g2);
  return null;
}

/** What kind of non-public address this is, or null when it is public (or not an IP address). */
export function privateAddressKind(address: string): PrivateAddressKind | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 0) return null;
  const v4 = version === 4 ? bare : embeddedIpv4(bare);
  const [target, family] = v4 ? [v4, 'ipv4' as const] : [bare, 'ipv6' as const];
  return LISTS.find(({ list }) => list.check(target, family))?.kind ?? null;
}

export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export type HostCheckOptions = {
  /** Local mode (the server on its embedded database): the user's own machine and network are fine. */
  allowPrivate: boolean;
  lookup?: LookupAll;
};

export type HostCheck = { ok: true; addresses: string[] } | { ok: false; error: ConnectorError };

const DESCRIPTION: Record<PrivateAddressKind, string> = {
  unspecified: 'an unspecified address',
  loopback: 'this server itself',
  private: 'a private network address',
  link_local: 'a link-local address (such as a cloud metadata service)',
  shared: 'a carrier-grade NAT address',
  unique_local: 'a private IPv6 address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

const defaultLookup: LookupAll = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Refuses hosts that lead into Lockstep's own network (SSRF): every address the name resolves to must
 * be public. Does nothing in local mode. This check gives the user a clear answer when a connection
 * is saved; a name that re-resolves differently later (DNS rebinding) is refused by the sockets
 * themselves (publicOnlyLookup, guardedSocket).
 */
export async function checkHost(host: string, options: HostCheckOptions): Promise<HostCheck> {
  const name = host.trim().replace(/^\[|\]$/g, '');
  if (name === '') {
    return {
      ok: false,
      error: new ConnectorError('validation', 'empty host', 'Give the host to connect to.'),
    };
  }
  if (options.allowPrivate) return { ok: true, addresses: [] };
  if (name.startsWith('/')) {
    return refuse(host, 'a local socket', 'unix socket path');
  }
  let addresses: string[];
  if (isIP(name.replace(/%.*$/, ''))) addresses = [name];
  else {
    try {
      addresses = (await (options.lookup ?? defaultLookup)(name)).map((a) => a.address);
    } catch (error) {
      const code = (error as { code?: string }).code ?? String(error);
      return {
        ok: false,
        error: new ConnectorError(
          'validation',
          `cannot resolve ${name}: ${code}`,
          `The host "${name}" could not be found. Check its spelling.`,
        ),
      };
    }
    if (addresses.length === 0) {
      return {
        ok: false,
        error: new ConnectorError(
          'validation',
          `no address for ${name}`,
          `The host "${name}" has no address.`,
        ),
      };
    }
  }
  for (const address of addresses) {
    const kind = privateAddressKind(address);
    if (kind) return refuse(name === address ? name : `${name} (${address})`, DESCRIPTION[kind], kind);
  }
  return { ok: true, addresses };
}

function refuse(shown: string, what: string, detail: string): HostCheck {
  return {
    ok: false,
    error: new ConnectorError(
      'permission_denied',
      `refused host ${shown}: ${detail}`,
      `Lockstep cannot connect to ${shown}: it is ${what}. Use an address reachable on the public internet.`,
    ),
  };
}

/** As checkHost, throwing the ConnectorError. */
export async function assertHostAllowed(host: string, options: HostCheckOptions): Promise<string[]> {
  const result = await checkHost(host, options);
  if (!result.ok) throw result.error;
  return result.addresses;
}

/**
 * A `lookup` for net.connect that refuses a name resolving to a non-public address, at the moment
 * of connecting: the address checked is the address connected to, so a name that answered a public
 * address when the connection was saved and a private one now (DNS rebinding) is refused.
 * IP literals skip lookup; checkHost refuses those when the connection is saved.
 */
export function publicOnlyLookup(base: typeof dnsLookupCallback = dnsLookupCallback): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (error, addresses) => {
      const list = (addresses ?? []) as LookupAddress[];
      if (error) return callback(error, options.all ? [] : '', 0);
      for (const { address } of list) {
        const kind = privateAddressKind(address);
        if (!kind) continue;
        const refused = refuse(`${hostname} (${address})`, DESCRIPTION[kind], kind);
        if (!refused.ok) return callback(refused.error as NodeJS.ErrnoException, options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}

/** A socket whose `connect(port, host)` (as pg calls it) resolves through publicOnlyLookup. */
export function guardedSocket(base?: typeof dnsLookupCallback): Socket {
  const socket = new Socket();
  const connect = socket.connect.bind(socket) as (...args: unknown[]) => Socket;
  socket.connect = ((...args: unknown[]) =>
    typeof args[0] === 'number' && typeof args[1] === 'string'
      ? connect({ port: args[0], host: args[1], lookup: publicOnlyLookup(base) }, ...args.slice(2))
      : connect(...args)) as Socket['connect'];
  return socket;
}

let publicOnly = false;

/**
 * Whether outbound database connections may reach private addresses, for the whole process: the
 * server sets it once at boot (private hosts only in local and test mode); while it is off, every
 * PostgreSQL connection resolves its host through publicOnlyLookup.
 */
export function setPublicHostsOnly(value: boolean) {
  publicOnly = value;
}

export const publicHostsOnly = () => publicOnly;
