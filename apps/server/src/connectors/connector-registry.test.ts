import { describe, expect, it } from 'vitest';
import { ConnectionProblem } from './connector-port';
import { createConnectorRegistry } from './connector-registry';

// A closed local port: without the guard, the check gets as far as connecting and fails there.
const local = { connectionString: 'postgres://u:p@127.0.0.1:1/app' };

describe('PostgreSQL connection check and private hosts', () => {
  it('refuses a database on a private host before connecting, outside local mode', async () => {
    const port = createConnectorRegistry({ allowPrivateHosts: false }).get('postgresql');
    const error = await port?.check(local).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionProblem);
    expect(error).toMatchObject({ code: 'permission_denied' });
    expect((error as ConnectionProblem).userFacingMessage).toContain('127.0.0.1');
  });

  it('lets local mode connect to it', async () => {
    const port = createConnectorRegistry({ allowPrivateHosts: true }).get('postgresql');
    const error = await port?.check(local).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'transient' });
  });
});
