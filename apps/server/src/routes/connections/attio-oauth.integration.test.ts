import { createHash, randomBytes } from 'node:crypto';
import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../../test/pg-pair';
import { settleSync, syncRuns } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';

// Sign in with Attio (this server's app: the authorize page and the token endpoint on the OAuth host,
// the client's id and secret in the form) through the real routes against the simulator; a sync
// then reads and writes records with the OAuth access token (Attio's do not expire: nothing is
// renewed). Uninstalling the app (the token revoked) asks the person to sign in again. An API key
// still connects.
let t: TestApp;
let sim: AttioSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let pgUrl = '';
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/attio/callback';
const app = {
  clientId: 'lockstep-attio-test',
  clientSecret: 'attio-test-secret',
  redirectUris: [redirectUri],
};
const apiKey = randomBytes(32).toString('hex');

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** Attio's authorize page as the web app's popup opens it: the code (and the verifier the routes ask for). */
async function authorize(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const { url } = await api('POST', '/rest/external-connections/oauth/attio/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  const page = new URL(url);
  expect(page.origin + page.pathname).toBe(`${sim.url}/authorize`);
  expect(Object.fromEntries(page.searchParams)).toEqual({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: redirectUri,
    state,
  });
  const consented = await fetch(url, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

async function stored(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { row, items: openSecrets(t.ctx, row).connectionItems };
}

beforeAll(async () => {
  sim = await startAttioSimulator({
    idSeed: 12,
    defaultToken: false,
    tokens: [{ token: apiKey }],
    oauth: app,
  });
  t = await createTestApp({
    LOCKSTEP_ATTIO_API_URL: sim.url,
    LOCKSTEP_ATTIO_OAUTH_URL: sim.url,
    LOCKSTEP_ATTIO_CLIENT_ID: app.clientId,
    LOCKSTEP_ATTIO_CLIENT_SECRET: app.clientSecret,
  });
  user = await signUp(t.app, 'attio-oauth@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `attio_oauth_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql('create table people (id serial primary key, email text not null unique, first_name text)');
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Attio OAuth (sign in with Attio)', () => {
  it('offers sign in with Attio, the API key kept as an optional item', async () => {
    const info = await api('GET', '/rest/connector-info');
    const attio = info.find((c: { connectorType: string }) => c.connectorType === 'attio');
    expect(attio.auth).toMatchObject({ type: 'oauth2', signInAvailable: true });
    expect(attio.auth.requiredItems).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'apiKey', optional: true })]),
    );
  });

  it('the API key still connects', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'attio',
      connectionItems: { apiKey },
    });
    expect(conn).toMatchObject({ type: 'attio', status: 'ok' });
    const bases = await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([expect.objectContaining({ remoteId: sim.state.workspace.id })]);
  });

  it('exchanges the code, stores the token sealed, syncs records with it; a spent code is refused; uninstalling asks to sign in again', async () => {
    const { code, verifier } = await authorize();
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/attio/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'attio', status: 'ok' });
    const conn = res.json();
    const { row, items } = await stored(conn.id);
    const token = items.accessToken as string;
    expect(sim.state.tokens.get(token)?.kind).toBe('oauth');
    expect(items.refreshToken).toBeUndefined();
    expect(row.secrets).not.toContain(token);
    expect(res.body).not.toContain(token);

    const spent = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/attio/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(spent.statusCode).toBe(400);
    expect(spent.json().response.userFacingMessage).toMatch(/Attio did not accept the authorization/);

    // Attio People <-> PostgreSQL people through the OAuth connection.
    await sql(`insert into people (email, first_name) values ('new.oauth@example.com', 'Nova')`);
    const core = await setUpAppPostgresSync(api, {
      name: 'Attio (OAuth) <-> people',
      app: { type: 'attio', name: 'Attio', connectionId: conn.id, remoteId: sim.state.workspace.id },
      pgUrl,
      tables: [
        {
          left: 'People',
          right: 'people',
          fields: [
            ['Email addresses', 'email'],
            ['Name (first)', 'first_name'],
          ],
          matchOn: 'Email addresses',
        },
      ],
    });
    const inAttio = sim.state.queryableRecords('people').length;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (await sql('select count(*)::int as n from people'))[0]?.n === inAttio + 1 &&
        sim.state.queryableRecords('people').length === inAttio + 1,
      60_000,
    );
    expect((await syncRuns(t.ctx.db, core.id)).map((r) => r.status)).not.toContain('failed');
    // The person made in Attio was made with the OAuth token (its actor is that token).
    const made = sim.state
      .queryableRecords('people')
      .map((r) => sim.read('people', r.id).values as Record<string, Record<string, unknown>[]>)
      .find((v) => v.email_addresses?.[0]?.email_address === 'new.oauth@example.com');
    expect(made?.created_by?.[0]).toMatchObject({
      referenced_actor_type: 'api-token',
      referenced_actor_id: sim.state.tokenMeta.get(token)?.tokenId,
    });

    // The app is uninstalled (its token revoked): the REST layer asks the person to sign in again.
    sim.revokeToken(token);
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${conn.id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: expect.stringMatching(/Sign in with Attio again/),
    });
  });
});
