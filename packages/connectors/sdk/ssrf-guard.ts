import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
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
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unique_local', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const LISTS = RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list };
});

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (!match) return null;
  if (match[1]) return match[1];
  const high = Number.parseInt(match[2] ?? '0', 16);
  const low = Number.parseInt(match[3] ?? '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
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
 * be public. Does nothing in local mode. The check is at connection time only; a name that re-resolves
 * differently later (DNS rebinding) is not covered here.
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
