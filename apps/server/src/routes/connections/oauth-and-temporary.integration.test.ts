import { createHash, randomBytes } from 'node:crypto';
import { oauthDeniedMessage } from '@lockstep/contract';
import { type SupabaseSimulator, startSupabaseSimulator } from '@lockstep/simulators';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';
import { sealTemporaryConnection } from '../../services/temporary-connections';

// Supabase through the real routes, against the Management API simulator whose project database is
// a database of this test on the run's embedded PostgreSQL.
let t: TestApp;
let sim: SupabaseSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let projectUrl: string;
const ref = `proj${randomBytes(8).toString('hex')}`;
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/supabase/callback';

const post = (url: string, payload: unknown, auth: Record<string, string> | null = user.auth) =>
  t.app.inject({ method: 'POST', url, headers: { ...(auth ?? {}), ...json }, payload: payload as object });

async function consent(verifier: string): Promise<URLSearchParams> {
  return sim.authorize({
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
  });
}

async function connectSupabase(auth = user.auth) {
  const verifier = randomBytes(32).toString('base64url');
  const back = await consent(verifier);
  return post(
    '/rest/external-connections/oauth/supabase/authorize-callback',
    { code: back.get('code'), codeVerifier: verifier, redirectUri, connectionItems: {} },
    auth,
  );
}

async function roleExists(role: string) {
  const c = new pg.Client({ connectionString: projectUrl });
  await c.connect();
  try {
    return (await c.query('select 1 from pg_roles where rolname = $1', [role])).rowCount === 1;
  } finally {
    await c.end();
  }
}

function noSecretsIn(body: string) {
  for (const word of [
    'access_token',
    'accessToken',
    'refreshToken',
    'password',
    'connectionString',
    'sbp_',
  ]) {
    expect(body).not.toContain(word);
  }
}

beforeAll(async () => {
  const name = `supa_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  projectUrl = u.toString();
  const c = new pg.Client({ connectionString: projectUrl });
  await c.connect();
  await c.query('create table contacts (id serial primary key, name text not null, email text)');
  await c.query(`insert into contacts (name, email) values ('Ada', 'ada@example.com')`);
  await c.query(
    'create schema billing; create table billing.invoices (id serial primary key, total numeric)',
  );
  await c.end();
  sim = await startSupabaseSimulator({ projects: { [ref]: { databaseUrl: projectUrl, name: 'Shop' } } });
  t = await createTestApp(
    {
      LOCKSTEP_SUPABASE_API_URL: sim.url,
      LOCKSTEP_SUPABASE_CLIENT_ID: sim.client.clientId,
      LOCKSTEP_SUPABASE_CLIENT_SECRET: sim.client.clientSecret,
    },
    { runWorkers: false },
  );
  user = await signUp(t.app, 'supabase-owner@test.test');
  other = await signUp(t.app, 'supabase-other@test.test');
  await post('/rest/users/current/choose-plan', { productType: 'pro' });
});

afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Supabase OAuth callback', () => {
  it('lists Supabase as available', async () => {
    const info = (await t.app.inject({ url: '/rest/connector-info', headers: user.auth })).json();
    const supabase = info.find((c: { connectorType: string }) => c.connectorType === 'supabase');
    expect(supabase).toMatchObject({
      available: true,
      unavailableReason: null,
      auth: { type: 'oauth2', signInAvailable: true },
    });
    // No Airtable client id on this server: its sign-in is said to be unavailable, not offered to fail.
    const airtable = info.find((c: { connectorType: string }) => c.connectorType === 'airtable');
    expect(airtable.auth.signInAvailable).toBe(false);
  });

  it('starts a PKCE sign-in: the authorize URL leads back to our callback with a code the verifier redeems', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
    const state = randomBytes(16).toString('base64url');
    const res = await post('/rest/external-connections/oauth/supabase/authorize-url', {
      codeChallenge,
      state,
      redirectUri,
    });
    expect(res.statusCode).toBe(200);
    const url = new URL(res.json().url);
    expect(url.origin).toBe(new URL(sim.url).origin);
    expect(url.searchParams.get('code_challenge')).toBe(codeChallenge);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    // The app's consent answers with a redirect to our callback page, code and state in the query.
    const consented = await fetch(url, { redirect: 'manual' });
    const back = new URL(consented.headers.get('location') as string);
    expect(back.pathname).toBe('/oauth/supabase/callback');
    expect(back.searchParams.get('state')).toBe(state);
    const done = await post('/rest/external-connections/oauth/supabase/authorize-callback', {
      code: back.searchParams.get('code'),
      codeVerifier: verifier,
      redirectUri,
    });
    expect(done.statusCode).toBe(201);
    // A redirect anywhere else would hand the code to someone else.
    const elsewhere = await post('/rest/external-connections/oauth/supabase/authorize-url', {
      codeChallenge,
      state,
      redirectUri: 'https://evil.example/steal',
    });
    expect(elsewhere.statusCode).toBe(400);
    // PostgreSQL has no sign-in.
    const pgRes = await post('/rest/external-connections/oauth/postgresql/authorize-url', {
      codeChallenge,
      state,
    });
    expect(pgRes.statusCode).toBe(400);
  });

  it('exchanges the code with its PKCE verifier and stores the connection, tokens sealed', async () => {
    const res = await connectSupabase();
    expect(res.statusCode).toBe(201);
    noSecretsIn(res.body);
    const connection = res.json();
    expect(connection).toMatchObject({
      type: 'supabase',
      name: 'Supabase',
      status: 'ok',
      connectionItems: {},
    });
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    expect(items.accessToken).toMatch(/^sbp_oauth_/);
    expect(items.refreshToken).toBeTruthy();
    expect(Number(items.tokenExpiresAt)).toBeGreaterThan(Date.now());
  });

  it('answers a refused consent with the user-facing text of the spec', async () => {
    sim.state.consent = 'deny';
    const back = await consent('v'.repeat(43));
    sim.state.consent = 'approve';
    const res = await post('/rest/external-connections/oauth/supabase/authorize-callback', {
      error: back.get('error'),
      errorDescription: back.get('error_description'),
      connectionItems: {},
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().response.userFacingMessage).toBe(oauthDeniedMessage('supabase'));
    expect(res.json().response.userFacingMessage).toBe(
      'Supabase authorization was denied. Please try again.',
    );
  });

  it('refuses a wrong verifier, a spent code, a missing code and connectors without OAuth', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const back = await consent(verifier);
    const wrong = await post('/rest/external-connections/oauth/supabase/authorize-callback', {
      code: back.get('code'),
      codeVerifier: 'w'.repeat(43),
      redirectUri,
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().response.userFacingMessage).toMatch(/did not accept the authorization/);
    const missing = await post('/rest/external-connections/oauth/supabase/authorize-callback', {});
    expect(missing.statusCode).toBe(400);
    const pgOauth = await post('/rest/external-connections/oauth/postgresql/authorize-callback', {
      code: 'x',
      codeVerifier: 'v'.repeat(43),
    });
    expect(pgOauth.statusCode).toBe(400);
    expect(pgOauth.json().response.userFacingMessage).toMatch(/does not connect by signing in/);
    const unknown = await post('/rest/external-connections/oauth/myspace/authorize-callback', {});
    expect(unknown.statusCode).toBe(400);
  });
});

describe('Supabase bases', () => {
  it('lists project schemas, sets up a role on the chosen one when a base is attached, and removes the base', async () => {
    const connection = (await connectSupabase()).json();
    const previews = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${connection.id}/fetch-base-previews`,
      headers: user.auth,
    });
    expect(previews.statusCode).toBe(200);
    expect(previews.json().basePreviews).toEqual([
      { remoteId: `${ref}:billing`, name: 'Shop / billing' },
      { remoteId: `${ref}:public`, name: 'Shop / public' },
    ]);

    const coreBaseId = (await post('/rest/core-bases', { name: 'Supabase sync' })).json().id;
    const attached = await post('/rest/external-bases', {
      type: 'supabase',
      name: 'Shop / public',
      remoteId: `${ref}:public`,
      coreBaseId,
      externalConnectionId: connection.id,
      side: 'left',
      extras: {},
    });
    expect(attached.statusCode).toBe(201);
    noSecretsIn(attached.body);
    const left = attached.json().leftExternalBase;
    expect(left.externalTables.map((x: { remoteId: string }) => x.remoteId)).toEqual(['public.contacts']);

    // The role was stored, sealed, and the connection shows only what is not secret.
    const shown = (
      await t.app.inject({ url: `/rest/external-connections/${connection.id}`, headers: user.auth })
    ).json();
    expect(shown.connectionItems).toMatchObject({ projectRef: ref, projectName: 'Shop' });
    expect(Object.keys(shown.connectionItems)).not.toContain('connectionString');
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    expect(items.roleName).toMatch(/^lockstep_/);
    // The run uses the role through the runtime connectors (PostgreSQL underneath).
    const runtime = t.ctx.runtimeConnectors.forConnection('supabase', items);
    const page = await runtime?.read('public.contacts', null, { pageSize: 10 });
    expect(page?.records.map((r) => r.fields.name)).toEqual(['Ada']);

    // The base preview is asked for again: found, not renamed.
    const preview = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-bases/${left.id}/update-base-preview`,
      headers: user.auth,
    });
    expect(preview.statusCode).toBe(200);
    expect(preview.json()).toMatchObject({
      found: true,
      renamed: false,
      basePreview: { remoteId: `${ref}:public`, name: 'Shop / public' },
      externalBase: { id: left.id },
    });
    expect(
      (
        await t.app.inject({
          method: 'PATCH',
          url: `/rest/external-bases/${left.id}/update-base-preview`,
          headers: other.auth,
        })
      ).statusCode,
    ).toBe(404);

    // Real time for Supabase: the trigger mechanism, installed by the read above.
    const hooks = await t.app.inject({
      url: `/rest/external-bases/${left.id}/webhooks/debug`,
      headers: user.auth,
    });
    expect(hooks.json()).toMatchObject({
      mechanism: 'postgres_trigger_notify',
      channel: 'lockstep_changes',
      tables: [{ remoteId: 'public.contacts', triggerInstalled: true, triggerEnabled: true }],
      error: null,
    });
    noSecretsIn(hooks.body);

    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-bases/${left.id}`,
      headers: user.auth,
    });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({
      deleted: true,
      removedTableMappings: 0,
      coreBase: { leftExternalBase: null },
    });

    // Deleting the connection takes back what connecting gave: Lockstep's role is dropped from the
    // project; the data stays.
    const gone = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-connections/${connection.id}`,
      headers: user.auth,
    });
    expect(gone.statusCode, gone.body).toBe(200);
    expect(gone.json()).toEqual({ deleted: true });
    expect(await roleExists(items.roleName as string)).toBe(false);
    const c = new pg.Client({ connectionString: projectUrl });
    await c.connect();
    const contacts = (await c.query('select name from contacts')).rows;
    await c.end();
    expect(contacts).toEqual([{ name: 'Ada' }]);
  });

  /** A Supabase connection with a base attached (so its role exists) and detached again. */
  async function connectedAndDetached() {
    const connection = (await connectSupabase()).json();
    const coreBaseId = (await post('/rest/core-bases', { name: 'Revoked' })).json().id;
    const attached = await post('/rest/external-bases', {
      type: 'supabase',
      name: 'Shop / billing',
      remoteId: `${ref}:billing`,
      coreBaseId,
      externalConnectionId: connection.id,
      side: 'left',
      extras: {},
    });
    expect(attached.statusCode).toBe(201);
    await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-bases/${attached.json().leftExternalBase.id}`,
      headers: user.auth,
    });
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    return { id: connection.id as string, items: openSecrets(t.ctx, row).connectionItems };
  }

  async function deleteConnection(id: string) {
    const gone = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-connections/${id}`,
      headers: user.auth,
    });
    expect(gone.statusCode, gone.body).toBe(200);
    expect(
      await t.ctx.db.selectFrom('external_connection').select('id').where('id', '=', id).execute(),
    ).toEqual([]);
    return gone.json() as { deleted: true; warning?: string };
  }

  it('still deletes a connection when Supabase refuses to drop the role, and says what to remove by hand', async () => {
    const { id, items } = await connectedAndDetached();
    // Supabase refuses the query (the organization took Lockstep's rights away).
    sim.faults.next({
      status: 403,
      body: { message: 'Forbidden resource' },
      path: /database\/query/,
      count: 5,
    });
    const answer = await deleteConnection(id);
    sim.faults.clear();
    expect(answer.warning).toMatch(
      new RegExp(`could not remove its database role "${items.roleName}" from the Supabase project "Shop"`),
    );
    expect(answer.warning).toContain(`drop role "${items.roleName}";`);
    expect(await roleExists(items.roleName as string)).toBe(true);
  });

  it('still deletes a connection whose token was revoked in Supabase, and says what to remove by hand', async () => {
    const { id, items } = await connectedAndDetached();
    // The user took Lockstep's access back in Supabase: the token is refused and cannot be renewed.
    sim.revokeToken(items.accessToken as string);
    sim.faults.next({
      status: 400,
      body: { error: 'invalid_grant', message: 'refresh token revoked' },
      path: '/v1/oauth/token',
    });
    const answer = await deleteConnection(id);
    sim.faults.clear();
    expect(answer.warning).toMatch(/Supabase no longer accepts this connection/);
    expect(answer.warning).toContain(`drop role "${items.roleName}";`);
    expect(await roleExists(items.roleName as string)).toBe(true);
  });
});

describe('Supabase schema generation', () => {
  it("creates the other app's table in the chosen Supabase schema, as Lockstep's role", async () => {
    const connection = (await connectSupabase()).json();
    const pgConnection = (
      await post('/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: projectUrl },
      })
    ).json();
    const coreBaseId = (await post('/rest/core-bases', { name: 'Into Supabase' })).json().id;
    const source = (
      await post('/rest/external-bases', {
        type: 'postgresql',
        name: 'Source',
        remoteId: 'public',
        coreBaseId,
        externalConnectionId: pgConnection.id,
        side: 'left',
        extras: {},
      })
    ).json().leftExternalBase;
    const dest = (
      await post('/rest/external-bases', {
        type: 'supabase',
        name: 'Shop / billing',
        remoteId: `${ref}:billing`,
        coreBaseId,
        externalConnectionId: connection.id,
        side: 'right',
        extras: {},
      })
    ).json().rightExternalBase;
    const contacts = source.externalTables.find(
      (x: { remoteId: string }) => x.remoteId === 'public.contacts',
    );
    const res = await post(`/rest/generate-schema/${dest.id}/create-tables`, {
      sourceTableIds: [contacts.id],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().tables[0]).toMatchObject({ name: 'contacts', remoteId: 'billing.contacts' });
    const c = new pg.Client({ connectionString: projectUrl });
    await c.connect();
    const owner = await c.query(
      `select tableowner from pg_tables where schemaname = 'billing' and tablename = 'contacts'`,
    );
    await c.end();
    expect(owner.rows[0].tableowner).toMatch(/^lockstep_/);
  });
});

describe('get-user-email', () => {
  it("answers the account of a PostgreSQL connection, null for Supabase; another user's is 404", async () => {
    const pgConnection = (
      await post('/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: projectUrl },
      })
    ).json();
    const email = await t.app.inject({
      url: `/rest/connector-rpc/get-user-email?externalConnectionId=${pgConnection.id}`,
      headers: user.auth,
    });
    expect(email.statusCode).toBe(200);
    expect(email.json()).toEqual({
      externalConnectionId: pgConnection.id,
      email: `${new URL(projectUrl).username}@${new URL(projectUrl).pathname.slice(1)}`,
    });
    const supabase = (await connectSupabase()).json();
    const none = await t.app.inject({
      url: `/rest/connector-rpc/get-user-email?externalConnectionId=${supabase.id}`,
      headers: user.auth,
    });
    expect(none.json()).toEqual({ externalConnectionId: supabase.id, email: null });
    const theirs = await t.app.inject({
      url: `/rest/connector-rpc/get-user-email?externalConnectionId=${pgConnection.id}`,
      headers: other.auth,
    });
    expect(theirs.statusCode).toBe(404);
    const bad = await t.app.inject({
      url: '/rest/connector-rpc/get-user-email?externalConnectionId=x',
      headers: user.auth,
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe('temporary connections', () => {
  it('connects before sign-in, and the signed-in user with that email claims it (once)', async () => {
    const created = await post(
      '/rest/temporary-external-connections/create',
      {
        email: 'Later@Test.test',
        connectorType: 'postgresql',
        connectionItems: { connectionString: projectUrl },
      },
      null,
    );
    expect(created.statusCode).toBe(201);
    noSecretsIn(created.body);
    const temp = created.json();
    expect(temp).toMatchObject({ email: 'later@test.test', connectorType: 'postgresql' });
    expect(temp.token).toMatch(/^ltc1\./);
    expect(Date.parse(temp.expiresAt)).toBeGreaterThan(Date.now());

    // Claiming needs sign-in, and the same email.
    expect(
      (await post('/rest/temporary-external-connections/claim', { token: temp.token }, null)).statusCode,
    ).toBe(401);
    const wrongUser = await post(
      '/rest/temporary-external-connections/claim',
      { token: temp.token },
      other.auth,
    );
    expect(wrongUser.statusCode).toBe(403);

    const later = await signUp(t.app, 'later@test.test');
    const claimed = await post(
      '/rest/temporary-external-connections/claim',
      { token: temp.token },
      later.auth,
    );
    expect(claimed.statusCode).toBe(201);
    noSecretsIn(claimed.body);
    expect(claimed.json()).toMatchObject({ type: 'postgresql', status: 'ok' });
    const again = await post('/rest/temporary-external-connections/claim', { token: temp.token }, later.auth);
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(claimed.json().id);
    const list = (await t.app.inject({ url: '/rest/external-connections', headers: later.auth })).json();
    expect(list.total).toBe(1);
  });

  it('refuses bad credentials, a tampered token and an expired one', async () => {
    const refused = await post(
      '/rest/temporary-external-connections/create',
      {
        email: 'x@test.test',
        connectorType: 'postgresql',
        connectionItems: { connectionString: projectUrl.replace(/:[^:@/]+@/, ':wrong@') },
      },
      null,
    );
    expect(refused.statusCode).toBe(400);
    const tampered = await post('/rest/temporary-external-connections/claim', { token: 'ltc1.v1.a.b.c' });
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().response.userFacingMessage).toMatch(/not valid/);
    const { token } = sealTemporaryConnection(
      t.ctx.secretBox,
      {
        email: 'supabase-owner@test.test',
        type: 'postgresql',
        items: {},
        name: null,
        accountEmail: null,
      },
      Date.now() - 2 * 60 * 60_000,
    );
    const expired = await post('/rest/temporary-external-connections/claim', { token });
    expect(expired.statusCode).toBe(410);
  });
});
