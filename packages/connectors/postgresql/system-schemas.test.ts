import { describe, expect, it } from 'vitest';
import { createTables } from './create-schema';
import { createPostgresqlPort } from './port';

// Nothing listens here: a schema refused before connecting never reaches it.
const nowhere = { connectionString: 'postgres://u:p@127.0.0.1:9/app' };

describe('system schemas', () => {
  it.each(['pg_catalog', 'PG_TOAST', 'pg_temp_3', 'information_schema', 'lockstep', ' lockstep '])(
    'refuses to attach %s, before connecting, with what to do',
    async (schema) => {
      await expect(createPostgresqlPort().discoverSchema(nowhere, schema)).rejects.toMatchObject({
        code: 'validation',
        userFacingMessage: expect.stringMatching(/system schema/),
      });
      await expect(createTables(nowhere, schema, [])).rejects.toMatchObject({ code: 'validation' });
    },
  );

  it('lets a user schema through to the database', async () => {
    // Not refused as a system schema: it goes on to connect (and fails there, nothing listens).
    const error = await createPostgresqlPort()
      .discoverSchema(nowhere, 'public')
      .catch((e: { code?: string; userFacingMessage?: string }) => e);
    expect(error).toMatchObject({ code: expect.any(String) });
    expect((error as { userFacingMessage?: string }).userFacingMessage ?? '').not.toMatch(/system schema/);
  });
});
