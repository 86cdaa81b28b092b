import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { openSecrets } from '../../services/external-connections';

// Issue 18 item 10: a PATCH could leave a connection holding items that are never used (a
// connection string beside host and user: one of them silently ignored) and could not remove one.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'patch-items@test.test');
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };

describe('changing a connection’s items', () => {
  it('refuses unknown items and a string beside host and user, removes items sent as null, and keeps the rest', async () => {
    const url = new URL(inject('adminDatabaseUrl'));
    const created = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, ...json },
      payload: { type: 'postgresql', name: 'PG', connectionItems: { connectionString: url.toString() } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const patch = (connectionItems: Record<string, string | null>) =>
      t.app.inject({
        method: 'PATCH',
        url: `/rest/external-connections/${id}`,
        headers: { ...user.auth, ...json },
        payload: { connectionItems },
      });
    const stored = async () =>
      openSecrets(
        t.ctx,
        await t.ctx.db
          .selectFrom('external_connection')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      ).connectionItems;

    const unknown = await patch({ hostname: 'db.example.com' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().response.userFacingMessage).toMatch(
      /does not take hostname\. It takes: connectionString, host/,
    );

    const both = await patch({ host: url.hostname, user: decodeURIComponent(url.username) });
    expect(both.statusCode).toBe(400);
    expect(both.json().response.userFacingMessage).toMatch(
      /either a connection string or host.*connectionString: null/,
    );
    expect(Object.keys(await stored())).toEqual(['connectionString']);

    // The whole switch in one PATCH: the string removed, the parts set; the connection still checks.
    const parts = {
      connectionString: null,
      host: url.hostname,
      port: url.port,
      database: url.pathname.slice(1),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };
    const switched = await patch(parts);
    expect(switched.statusCode, switched.body).toBe(200);
    expect(Object.keys(await stored()).sort()).toEqual(['database', 'host', 'password', 'port', 'user']);
  });
});
