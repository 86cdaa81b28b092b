import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { DEFAULT_CLIENT, type SupabaseSimulator, startSupabaseSimulator } from './index.ts';

// Two projects in two organizations, each backed by a database of its own on the run's PostgreSQL.
let sim: SupabaseSimulator;
const clock = new ManualClock();
const refs = { main: 'abcdefghijklmnopqrst', other: 'zyxwvutsrqponmlkjihg' };

async function createDatabase(): Promise<string> {
  const name = `sim_supa_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}

beforeAll(async () => {
  sim = await startSupabaseSimulator({
    clock,
    organizations: [
      { id: 'org-main', name: 'Main' },
      { id: 'org-other', name: 'Other' },
    ],
    projects: {
      [refs.main]: { databaseUrl: await createDatabase(), name: 'Shop', organizationId: 'org-main' },
      [refs.other]: { databaseUrl: await createDatabase(), name: 'Elsewhere', organizationId: 'org-other' },
    },
  });
});
afterAll(async () => sim?.close());

async function call(path: string, init: { method?: string; body?: unknown; token?: string | null } = {}) {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sim.token : init.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function oauthTokens(verifier = randomBytes(32).toString('base64url'), organizationSlug?: string) {
  const redirectUri = 'http://localhost:3000/oauth/supabase/callback';
  const back = await sim.authorize({
    redirectUri,
    codeChallenge: challengeOf(verifier),
    state: 'xyz',
    ...(organizationSlug ? { organizationSlug } : {}),
  });
  expect(back.get('state')).toBe('xyz');
  const code = back.get('code') as string;
  const res = await fetch(`${sim.url}/v1/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${DEFAULT_CLIENT.clientId}:${DEFAULT_CLIENT.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    }),
  });
  return { status: res.status, body: await res.json(), code, redirectUri, verifier };
}

describe('Supabase Management API simulator', () => {
  it('answers 401 with a message without a valid token', async () => {
    expect(await call('/v1/projects', { token: null })).toMatchObject({
      status: 401,
      body: { message: 'Unauthorized' },
    });
    expect((await call('/v1/projects', { token: 'sbp_nope' })).status).toBe(401);
  });

  it('lists organizations and projects with their slugs and IPv6-only direct host, and the pooler', async () => {
    const orgs = await call('/v1/organizations');
    expect(orgs.body).toEqual([
      { id: 'org-main', slug: 'org-main', name: 'Main' },
      { id: 'org-other', slug: 'org-other', name: 'Other' },
    ]);
    const projects = await call('/v1/projects');
    expect(projects.status).toBe(200);
    expect(projects.body).toHaveLength(2);
    expect(projects.body[0]).toMatchObject({
      id: refs.main,
      ref: refs.main,
      name: 'Shop',
      organization_id: 'org-main',
      organization_slug: 'org-main',
      status: 'ACTIVE_HEALTHY',
      database: { host: `db.${refs.main}.supabase.co` },
    });
    const pooler = await call(`/v1/projects/${refs.main}/config/database/pooler`);
    expect(pooler.status).toBe(200);
    expect(pooler.body).toEqual([
      expect.objectContaining({
        identifier: refs.main,
        database_type: 'PRIMARY',
        db_user: 'postgres',
        db_host: '127.0.0.1',
        db_port: sim.databaseAddress(refs.main).port,
        db_name: 'postgres',
        pool_mode: 'session',
      }),
    ]);
    expect((await call(`/v1/projects/${refs.main}`)).body.name).toBe('Shop');
    expect(await call('/v1/projects/nosuchprojectref0000')).toMatchObject({
      status: 404,
      body: { message: 'Project not found' },
    });
    const keys = await call(`/v1/projects/${refs.main}/api-keys`);
    expect(keys.body.map((k: { name: string }) => k.name)).toEqual(['anon', 'service_role']);
  });

  it('runs SQL as the service and answers with the rows; a bad query is a 400 with the error', async () => {
    const made = await call(`/v1/projects/${refs.main}/database/query`, {
      method: 'POST',
      body: {
        query:
          'create table notes (id serial primary key, body text); insert into notes (body) values ($$a$$), ($$b$$);',
      },
    });
    expect(made.status).toBe(201);
    const rows = await call(`/v1/projects/${refs.main}/database/query`, {
      method: 'POST',
      body: { query: 'select body from notes where id > $1 order by id', parameters: [0] },
    });
    expect(rows).toMatchObject({ status: 201, body: [{ body: 'a' }, { body: 'b' }] });
    const bad = await call(`/v1/projects/${refs.main}/database/query`, {
      method: 'POST',
      body: { query: 'select * from nowhere' },
    });
    expect(bad.status).toBe(400);
    // As Supabase passes PostgreSQL's error on: the code, then the line and a caret under the spot.
    expect(bad.body.message).toBe(
      'Failed to run sql query: ERROR:  42P01: relation "nowhere" does not exist\nLINE 1: select * from nowhere\n                      ^\n',
    );
    const readOnly = await call(`/v1/projects/${refs.main}/database/query`, {
      method: 'POST',
      body: { query: 'insert into notes (body) values ($$c$$)', read_only: true },
    });
    expect(readOnly.status).toBe(400);
  });

  it("the project's database answers through the pooler as `<role>.<ref>` on `postgres`, with real authentication", async () => {
    await call(`/v1/projects/${refs.main}/database/query`, {
      method: 'POST',
      body: {
        query: `create role sim_probe_${refs.main} login password 'probe-pass'; grant select on notes to sim_probe_${refs.main}`,
      },
    });
    const { host, port, database, userSuffix } = sim.databaseAddress(refs.main);
    expect(userSuffix).toBe(`.${refs.main}`);
    const client = new pg.Client({
      host,
      port,
      database,
      user: `sim_probe_${refs.main}${userSuffix}`,
      password: 'probe-pass',
    });
    await client.connect();
    const r = await client.query('select count(*)::int as n from notes');
    expect(r.rows[0].n).toBe(2);
    await client.end();
    const wrong = new pg.Client({
      host,
      port,
      database,
      user: `sim_probe_${refs.main}${userSuffix}`,
      password: 'wrong',
    });
    await expect(wrong.connect()).rejects.toMatchObject({ code: '28P01' });
    await wrong.end().catch(() => {});
    // A user that names no project is refused by the pooler itself, as Supavisor does.
    const lost = new pg.Client({
      host,
      port,
      database,
      user: `sim_probe_${refs.main}`,
      password: 'probe-pass',
    });
    await expect(lost.connect()).rejects.toThrow(/Tenant or user not found/);
    await lost.end().catch(() => {});
  });

  it("answers an OAuth token only within its app's scopes, and a read-only member only what it may read", async () => {
    sim.state.registerOAuthClient({
      clientId: 'narrow-app',
      clientSecret: 'narrow-secret',
      redirectUris: [],
      scopes: ['organizations:read', 'projects:read', 'database:read'],
    });
    const verifier = randomBytes(32).toString('base64url');
    const back = await sim.authorize({
      clientId: 'narrow-app',
      redirectUri: 'http://localhost/cb',
      codeChallenge: challengeOf(verifier),
    });
    const tokens = await fetch(`${sim.url}/v1/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('narrow-app:narrow-secret').toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.get('code') as string,
        code_verifier: verifier,
      }).toString(),
    });
    const token = ((await tokens.json()) as { access_token: string }).access_token;
    expect((await call(`/v1/projects/${refs.main}`, { token })).status).toBe(200);
    const query = (read_only: boolean) =>
      call(`/v1/projects/${refs.main}/database/query`, {
        method: 'POST',
        token,
        body: { query: 'select 1 as one', read_only },
      });
    expect(await query(false)).toMatchObject({
      status: 403,
      body: { message: 'Your token does not have the required scope: database:write' },
    });
    expect(await query(true)).toMatchObject({ status: 201, body: [{ one: 1 }] });

    sim.state.role = 'read_only';
    try {
      expect((await call('/v1/projects')).status).toBe(200);
      expect((await call(`/v1/projects/${refs.main}`)).status).toBe(403);
      expect(
        (
          await call(`/v1/projects/${refs.main}/database/query`, {
            method: 'POST',
            body: { query: 'select 1' },
          })
        ).status,
      ).toBe(403);
    } finally {
      sim.state.role = 'owner';
    }
  });

  it('OAuth with PKCE: code for tokens (201), one organization per grant, refresh tokens rotate', async () => {
    const first = await oauthTokens();
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 86_400 });
    const token = first.body.access_token as string;
    const projects = await call('/v1/projects', { token });
    expect(projects.body.map((p: { ref: string }) => p.ref)).toEqual([refs.main]);
    expect((await call(`/v1/projects/${refs.other}`, { token })).status).toBe(403);

    // The code is single-use, and the verifier must match.
    const again = await fetch(`${sim.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        client_id: DEFAULT_CLIENT.clientId,
        client_secret: DEFAULT_CLIENT.clientSecret,
        code: first.code,
        code_verifier: first.verifier,
      }),
    });
    expect(again.status).toBe(400);
    const wrongVerifier = await oauthTokens(undefined, 'org-other');
    expect(wrongVerifier.status).toBe(201);

    const refresh = async (rt: string) =>
      fetch(`${sim.url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: rt,
          client_id: DEFAULT_CLIENT.clientId,
          client_secret: DEFAULT_CLIENT.clientSecret,
        }),
      });
    const renewed = await refresh(first.body.refresh_token);
    expect(renewed.status).toBe(201);
    expect((await refresh(first.body.refresh_token)).status).toBe(400);

    // Access tokens expire.
    clock.advance(86_400_000);
    expect((await call('/v1/projects', { token })).status).toBe(401);
  });

  it('PKCE is required and the verifier must match; a refusal comes back as access_denied', async () => {
    const u = new URL(`${sim.url}/v1/oauth/authorize`);
    u.searchParams.set('client_id', DEFAULT_CLIENT.clientId);
    u.searchParams.set('redirect_uri', 'http://localhost/cb');
    u.searchParams.set('response_type', 'code');
    const noPkce = await fetch(u, { redirect: 'manual' });
    expect(new URL(noPkce.headers.get('location') as string).searchParams.get('error')).toBe(
      'invalid_request',
    );

    const back = await sim.authorize({
      redirectUri: 'http://localhost/cb',
      codeChallenge: challengeOf('right'),
    });
    const res = await fetch(`${sim.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.get('code') as string,
        code_verifier: 'wrong',
        client_id: DEFAULT_CLIENT.clientId,
        client_secret: DEFAULT_CLIENT.clientSecret,
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });

    sim.state.consent = 'deny';
    const denied = await sim.authorize({
      redirectUri: 'http://localhost/cb',
      codeChallenge: challengeOf('x'),
    });
    sim.state.consent = 'approve';
    expect(denied.get('error')).toBe('access_denied');
    expect(denied.get('code')).toBeNull();
  });

  it('limits requests per user per minute (429 with a message) and injects faults', async () => {
    const limited = await startSupabaseSimulator({ projects: {}, rateLimit: 2, clock: new ManualClock() });
    try {
      const get = () =>
        fetch(`${limited.url}/v1/projects`, { headers: { authorization: `Bearer ${limited.token}` } });
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(200);
      const third = await get();
      expect(third.status).toBe(429);
      expect(await third.json()).toEqual({ message: 'Too many requests. Please try again later.' });
      (limited.clock as ManualClock).advance(60_000);
      expect((await get()).status).toBe(200);
      limited.faults.next({ status: 503, body: { message: 'Service unavailable' } });
      expect((await get()).status).toBe(503);
      expect(limited.requestLog.count({ path: '/v1/projects' })).toBe(5);
    } finally {
      await limited.close();
    }
  });
});
