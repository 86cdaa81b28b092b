import { describe, expect, it } from 'vitest';
import { assertPostgresqlHostAllowed, connectionHost } from './connection';

describe('connectionHost', () => {
  it('reads the host as pg does', () => {
    expect(connectionHost({ connectionString: 'postgres://u:p@db.example.com:5432/app' })).toBe(
      'db.example.com',
    );
    expect(connectionHost({ connectionString: 'postgresql://u@[::1]:5432/app' })).toBe('[::1]');
    // A host parameter wins over the URL's host.
    expect(connectionHost({ connectionString: 'postgres://u@db.example.com/app?host=10.0.0.7' })).toBe(
      '10.0.0.7',
    );
    expect(connectionHost({ connectionString: 'postgres://%2Fvar%2Frun%2Fpostgresql/app' })).toBe(
      '/var/run/postgresql',
    );
    expect(connectionHost({ connectionString: 'socket:/var/run/postgresql?db=app' })).toBe(
      '/var/run/postgresql',
    );
    expect(connectionHost({ connectionString: '/tmp app' })).toBe('/tmp');
    expect(connectionHost({ connectionString: 'postgres:///app' })).toBe('localhost');
    expect(connectionHost({ host: '192.168.1.4', database: 'app', user: 'u' })).toBe('192.168.1.4');
    expect(connectionHost({})).toBe('localhost');
  });
});

describe('assertPostgresqlHostAllowed', () => {
  it('refuses loopback, private and metadata hosts outside local mode', async () => {
    for (const connectionString of [
      'postgres://u:p@127.0.0.1:5432/app',
      'postgres://u:p@localhost/app',
      'postgres://u:p@db.example.com/app?host=169.254.169.254',
      'postgres://u:p@[fd00::5]/app',
      'postgres:///app',
    ]) {
      await expect(
        assertPostgresqlHostAllowed({ connectionString }, { allowPrivate: false }),
        connectionString,
      ).rejects.toMatchObject({ code: 'permission_denied' });
    }
    await expect(
      assertPostgresqlHostAllowed({ host: '10.1.1.1', database: 'd', user: 'u' }, { allowPrivate: false }),
    ).rejects.toMatchObject({ code: 'permission_denied' });
  });

  it('accepts a public address, and anything in local mode', async () => {
    await expect(
      assertPostgresqlHostAllowed(
        { connectionString: 'postgres://u:p@8.8.8.8/app' },
        { allowPrivate: false },
      ),
    ).resolves.toBeUndefined();
    await expect(
      assertPostgresqlHostAllowed(
        { connectionString: 'postgres://u:p@127.0.0.1/app' },
        { allowPrivate: true },
      ),
    ).resolves.toBeUndefined();
  });

  it('reports a connection string that is not a URL as a validation problem', async () => {
    await expect(
      assertPostgresqlHostAllowed({ connectionString: 'host=db dbname=app' }, { allowPrivate: false }),
    ).rejects.toMatchObject({ code: 'validation' });
  });
});
