import { describe, expect, it } from 'vitest';
import { assertHostAllowed, checkHost, type LookupAll, privateAddressKind } from './ssrf-guard';

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
