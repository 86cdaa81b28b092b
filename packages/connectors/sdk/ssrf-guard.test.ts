import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { poolConfig } from '../postgresql/connection';
import {
  assertHostAllowed,
  checkHost,
  guardedSocket,
  type LookupAll,
  privateAddressKind,
  publicOnlyLookup,
  setPublicHostsOnly,
} from './ssrf-guard';

const resolvesTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('privateAddressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'link_local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fe80::1%eth0', 'link_local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['0:0:0:0:0:ffff:a00:1', 'private'],
    ['64:ff9b::10.0.0.1', 'private'],
    // IPv4-compatible IPv6 (review of issue 18): the IPv4 address inside is what is reached.
    ['::127.0.0.1', 'loopback'],
    ['[::127.0.0.1]', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a9fe:a9fe', 'link_local'],
    ['0:0:0:0:0:0:a00:1', 'private'],
    // 6to4 carries an IPv4 address in its second and third groups.
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::', 'private'],
    // Documentation ranges.
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.200', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(privateAddressKind(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    'db.example.com',
  ])('%s is public (or not an address)', (address) => {
    expect(privateAddressKind(address)).toBeNull();
  });
});

describe('checkHost', () => {
  it('accepts a host whose every address is public', async () => {
    const result = await checkHost('db.example.com', {
      allowPrivate: false,
      lookup: resolvesTo('8.8.8.8', '2606:4700::1111'),
    });
    expect(result).toEqual({ ok: true, addresses: ['8.8.8.8', '2606:4700::1111'] });
  });

  it('refuses a name with any private address, naming the address in the message', async () => {
    const result = await checkHost('db.example.com', {
      allowPrivate: false,
      lookup: resolvesTo('8.8.8.8', '10.0.0.5'),
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('permission_denied');
    expect(result.error.userFacingMessage).toContain('db.example.com (10.0.0.5)');
    expect(result.error.userFacingMessage).toContain('private network');
  });

  it('refuses literal addresses, the metadata service and socket paths without a lookup', async () => {
    const lookup: LookupAll = async () => {
      throw new Error('no lookup expected');
    };
    for (const host of ['127.0.0.1', '169.254.169.254', '[::1]', '0.0.0.0', '/var/run/postgresql']) {
      const result = await checkHost(host, { allowPrivate: false, lookup });
      expect(result.ok, host).toBe(false);
      if (!result.ok) expect(result.error.code, host).toBe('permission_denied');
    }
  });

  it('resolves real names: localhost is refused', async () => {
    await expect(assertHostAllowed('localhost', { allowPrivate: false })).rejects.toMatchObject({
      code: 'permission_denied',
    });
  });

  it('allows everything in local mode, without a lookup', async () => {
    const lookup: LookupAll = async () => {
      throw new Error('no lookup expected');
    };
    expect(await checkHost('127.0.0.1', { allowPrivate: true, lookup })).toEqual({ ok: true, addresses: [] });
    expect((await checkHost('localhost', { allowPrivate: true, lookup })).ok).toBe(true);
  });

  it('reports an unknown name or an empty host as a validation problem', async () => {
    const notFound: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const unknown = await checkHost('nope.invalid', { allowPrivate: false, lookup: notFound });
    expect(unknown.ok ? null : unknown.error.code).toBe('validation');
    const empty = await checkHost('  ', { allowPrivate: false });
    expect(empty.ok ? null : empty.error.code).toBe('validation');
  });
});

describe('checked again at connect time (DNS rebinding)', () => {
  /** A resolver that answers what `answers` says, one answer per call (the last one repeats). */
  const rebinding = (...answers: string[][]) => {
    let call = 0;
    return ((_host: string, _options: unknown, callback: (e: Error | null, a: LookupAddress[]) => void) => {
      const list = answers[Math.min(call++, answers.length - 1)] as string[];
      callback(
        null,
        list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    }) as unknown as typeof dnsLookup;
  };
  const resolve = (lookup: ReturnType<typeof publicOnlyLookup>, all: boolean) =>
    new Promise<{ error: unknown; result: unknown }>((done) =>
      lookup('db.example.com', { all }, (error, address) => done({ error, result: address })),
    );

  it('passes public addresses through, in both forms net.connect asks for', async () => {
    const lookup = publicOnlyLookup(rebinding(['93.184.216.34', '2606:2800:220:1::1']));
    expect(await resolve(lookup, true)).toEqual({
      error: null,
      result: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    });
    expect(await resolve(lookup, false)).toEqual({ error: null, result: '93.184.216.34' });
  });

  it('refuses a name that resolved to a public address when saved and to a private one now', async () => {
    const base = rebinding(['93.184.216.34'], ['93.184.216.34', '169.254.169.254']);
    const first = await resolve(publicOnlyLookup(base), false);
    expect(first.error).toBeNull();
    const second = await resolve(publicOnlyLookup(base), true);
    expect(second.error).toMatchObject({ code: 'permission_denied' });
    expect(String((second.error as Error).message)).toContain('169.254.169.254');
  });

  it('makes the socket fail before any byte is sent when the host resolves to a private address', async () => {
    const socket = guardedSocket(rebinding(['127.0.0.1']));
    const failed = new Promise<Error>((done) => socket.once('error', done));
    socket.connect(5432, 'db.example.com');
    expect(await failed).toMatchObject({ code: 'permission_denied' });
  });

  it('guards every PostgreSQL connection while the server allows public hosts only', async () => {
    setPublicHostsOnly(true);
    try {
      const client = new pg.Client(
        poolConfig({ host: 'localhost', port: '1', database: 'x', user: 'x', password: 'x' }),
      );
      client.on('error', () => {});
      const error = await client.connect().catch((e: unknown) => e);
      expect(String((error as Error).message)).toMatch(/refused host localhost/);
    } finally {
      setPublicHostsOnly(false);
    }
    // Local mode: no guard (the connection is refused by the closed port instead).
    const client = new pg.Client(
      poolConfig({ host: 'localhost', port: '1', database: 'x', user: 'x', password: 'x' }),
    );
    client.on('error', () => {});
    const error = await client.connect().catch((e: unknown) => e);
    expect(String((error as Error).message)).not.toMatch(/refused host/);
  });
});
