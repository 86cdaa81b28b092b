import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

/**
 * Issue 18's route-enumerating suite: every /rest route of the OpenAPI document, walked the same
 * way, so a new route that forgets a check fails here without anyone writing a test for it.
 * For each route: 401 in the envelope without a token; 403 for a staff route as a user; another
 * tenant's ids answer 404 (reads and deletes) or at least never 2xx (writes) and change nothing;
 * a NUL byte, an unknown query parameter, an unknown body field and a body of the wrong type each
 * answer 400 in the envelope; and nothing ever answers 5xx.
 */
let t: TestApp;
let a: Awaited<ReturnType<typeof signUp>>;
let b: Awaited<ReturnType<typeof signUp>>;
/** Tenant B's ids, by the resource a path names. */
const theirs: Record<string, string> = {};

type Operation = { security?: unknown[]; tags?: string[]; requestBody?: unknown };
type Route = { method: string; path: string; op: Operation };
let routes: Route[] = [];

const json = { 'content-type': 'application/json' };
/** Path segments before an id, to the resource of tenant B the id is taken from. */
const RESOURCE_OF: [RegExp, string][] = [
  [/\/core-bases\/\{id\}/, 'coreBase'],
  [/^\/rest\/external-connections\/\{id\}/, 'connection'],
  [/^\/rest\/external-bases\/\{id\}/, 'externalBase'],
  [/^\/rest\/external-tables\/\{id\}/, 'externalTable'],
  [/^\/rest\/sync-errors\/(clear-and-retry\/)?\{id\}/, 'syncError'],
  [/^\/rest\/sync-logs\/\{id\}/, 'syncLog'],
  [/^\/rest\/sync-preview\/\{id\}/, 'preview'],
  [/^\/rest\/git-sync\/\{id\}/, 'gitSync'],
  [/^\/rest\/api-import\/\{id\}/, 'apiImport'],
  [/^\/rest\/developer\/tokens\/\{id\}/, 'apiToken'],
  [/^\/rest\/developer\/webhooks\/\{id\}/, 'webhook'],
  [/^\/rest\/blended-tables\/\{id\}/, 'blendedTable'],
];
/** Parameters named for what they hold, wherever they appear. */
const PARAM_OF: Record<string, string> = {
  coreBaseId: 'coreBase',
  externalBaseId: 'externalBase',
  externalTableId: 'externalTable',
  tableMappingId: 'tableMapping',
};

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_STAFF_EMAILS: 'staff-every-route@test.test' });
  a = await signUp(t.app, 'tenant-a-every-route@test.test');
  b = await signUp(t.app, 'tenant-b-every-route@test.test');
  for (const u of [a, b])
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...u.auth, ...json },
      payload: { productType: 'pro' },
    });
  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url, headers: { ...b.auth, ...json }, payload });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    return res.json();
  };
  // B's own database, with a table to sync.
  const name = `sec_b_${randomUUID().slice(0, 8)}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const theirDatabase = Object.assign(new URL(inject('adminDatabaseUrl')), {
    pathname: `/${name}`,
  }).toString();
  const setup = new pg.Client({ connectionString: theirDatabase });
  await setup.connect();
  await setup.query('create table people (id serial primary key, name text)');
  await setup.query(`insert into people (name) values ('B one'), ('B two')`);
  await setup.end();
  theirs.coreBase = (await post('/rest/core-bases', { name: "B's sync" })).id;
  theirs.connection = (
    await post('/rest/external-connections', {
      type: 'postgresql',
      name: "B's database",
      connectionItems: { connectionString: theirDatabase },
    })
  ).id;
  const attached = await post('/rest/external-bases', {
    type: 'postgresql',
    name: "B's schema",
    remoteId: 'public',
    coreBaseId: theirs.coreBase,
    externalConnectionId: theirs.connection,
    side: 'left',
  });
  theirs.externalBase = attached.leftExternalBase.id;
  theirs.externalTable = attached.leftExternalBase.externalTables[0].id;
  // Both sides on B's own table, mapped: a preview, a run and an issue of B's to try A on.
  const both = await post('/rest/external-bases', {
    type: 'postgresql',
    name: "B's schema again",
    remoteId: 'public',
    coreBaseId: theirs.coreBase,
    externalConnectionId: theirs.connection,
    side: 'right',
  });
  const patched = await t.app.inject({
    method: 'PATCH',
    url: `/rest/core-bases/${theirs.coreBase}?detailLevel=fullBaseSchema`,
    headers: { ...b.auth, ...json },
    payload: {
      mappings: {
        tableMappings: [
          {
            leftTableId: theirs.externalTable,
            rightTableId: both.rightExternalBase.externalTables[0].id,
            syncDirection: 'both',
            filter: null,
            matchOnFieldId: null,
            matchOnSecondaryFieldId: null,
            conflictWinnerSide: 'left',
            conflictReview: false,
            deleteProtection: false,
            columnMappings: [],
          },
        ],
      },
    },
  });
  expect(patched.statusCode, patched.body).toBe(200);
  theirs.tableMapping = patched.json().mappings.tableMappings[0].id;
  theirs.preview = (await post('/rest/sync-preview/create', { coreBaseId: theirs.coreBase })).id;
  theirs.syncLog = (
    await t.ctx.db
      .insertInto('sync_log')
      .values({
        owner_id: b.userId,
        core_base_id: theirs.coreBase as string,
        trigger: 'manual',
        counts: '{}',
        error: null,
        started_at: new Date(),
        finished_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  theirs.syncError = (
    await t.ctx.db
      .insertInto('sync_error')
      .values({
        owner_id: b.userId,
        core_base_id: theirs.coreBase as string,
        code: 'validation',
        message: 'refused',
        user_facing_message: "B's issue",
        details: '{}',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;

  theirs.gitSync = (
    await post('/rest/git-sync', {
      coreBaseId: theirs.coreBase,
      repository: { kind: 'https', url: 'https://git.example.com/b.git', token: 'b-token' },
    })
  ).gitSyncId;
  theirs.apiImport = (
    await t.ctx.db
      .insertInto('api_import')
      .values({
        owner_id: b.userId,
        name: "B's import",
        config: JSON.stringify({
          method: 'GET',
          url: 'https://api.example.com/people',
          headers: {},
          body: null,
          auth: { type: 'none' },
          recordsPath: '$[*]',
          pagination: { type: 'none' },
          idField: 'id',
          fields: [{ name: 'id', type: 'number' }],
        }),
        secrets: t.ctx.secretBox.seal({ auth: { type: 'none' }, headers: {} }),
        external_connection_id: theirs.connection as string,
        base_remote_id: 'public',
        table_remote_id: 'public.people',
        mapping: JSON.stringify([{ sourceField: 'id', targetFieldId: 'id' }]),
        match_target_field_id: 'id',
        schedule: 'daily',
        max_pages: 10,
        max_records: 100,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  theirs.apiToken = (await post('/rest/developer/tokens', { name: "B's token", scopes: ['read'] })).id;
  theirs.webhook = (
    await post('/rest/developer/webhooks', { url: 'https://example.com/b-hooks', events: ['issue.opened'] })
  ).id;

  theirs.blendedTable = (
    await t.ctx.db
      .insertInto('blended_table')
      .values({
        owner_id: b.userId,
        name: "B's blend",
        config: JSON.stringify({
          sources: [
            { connectionId: theirs.connection, baseRemoteId: 'public', tableRemoteId: 'public.a', name: 'A' },
            { connectionId: theirs.connection, baseRemoteId: 'public', tableRemoteId: 'public.b', name: 'B' },
          ],
          defaultSource: 0,
          fields: [
            {
              id: 'f1',
              name: 'Email',
              type: 'email',
              sourceFields: ['email', 'email'],
              options: {},
              readOnly: false,
            },
          ],
        }),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;

  const doc = (await t.app.inject('/api/docs/json')).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  routes = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/rest/'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
}, 60_000);
afterAll(async () => t?.close());

const isPublic = (r: Route) => Array.isArray(r.op.security) && r.op.security.length === 0;
const isStaff = (r: Route) => r.op.tags?.includes('staff') === true;
const hasBody = (r: Route) => r.op.requestBody !== undefined;
/** The path with every parameter filled: tenant B's id where the path names a resource of B, else a fresh UUID. */
function fill(r: Route, own: 'fresh' | 'theirs' = 'fresh') {
  const resource = RESOURCE_OF.find(([re]) => re.test(r.path))?.[1];
  return r.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const kind = name === 'id' ? resource : PARAM_OF[name];
    return own === 'theirs' && kind && theirs[kind] ? (theirs[kind] as string) : randomUUID();
  });
}
const namesTheirs = (r: Route) =>
  RESOURCE_OF.some(([re]) => re.test(r.path)) || Object.keys(PARAM_OF).some((p) => r.path.includes(`{${p}}`));

type Res = { statusCode: number; body: string; json(): unknown };
function envelopeOf(res: Res) {
  let body: {
    statusCode?: number;
    timestamp?: string;
    path?: string;
    response?: { userFacingMessage?: unknown };
  };
  try {
    body = res.json() as typeof body;
  } catch {
    return null;
  }
  return body.statusCode === res.statusCode &&
    typeof body.timestamp === 'string' &&
    typeof body.path === 'string' &&
    body.response?.userFacingMessage !== undefined
    ? body
    : null;
}

/** Each failure as "METHOD path: what"; the suite expects none. */
async function walk(
  check: (r: Route) => Promise<string | null>,
  which: (r: Route) => boolean = () => true,
): Promise<string[]> {
  const failures: string[] = [];
  for (const r of routes.filter(which)) {
    const failure = await check(r);
    if (failure) failures.push(`${r.method} ${r.path}: ${failure}`);
  }
  return failures;
}

const call = (r: Route, url: string, auth: Record<string, string> | null, payload?: unknown) =>
  t.app.inject({
    method: r.method as 'GET',
    url,
    headers: { ...(auth ?? {}), ...(payload !== undefined ? json : {}) },
    ...(payload !== undefined
      ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
      : {}),
  });

/** Fails the route when it answered 5xx or left the envelope on an error. */
function badAnswer(res: Res, expected: (status: number) => boolean, what: string): string | null {
  if (res.statusCode >= 500) return `${what}: ${res.statusCode} ${res.body.slice(0, 200)}`;
  if (!expected(res.statusCode)) return `${what}: answered ${res.statusCode} ${res.body.slice(0, 200)}`;
  if (res.statusCode >= 400 && !envelopeOf(res)) return `${what}: ${res.statusCode} outside the envelope`;
  return null;
}

describe('every /rest route of the OpenAPI document', () => {
  it('is found, with the staff and public ones marked', () => {
    expect(routes.length).toBeGreaterThan(80);
    expect(routes.filter(isStaff).length).toBeGreaterThanOrEqual(7);
  });

  it('answers 401 in the envelope without a token (public routes excepted)', async () => {
    const failures = await walk(
      async (r) =>
        badAnswer(await call(r, fill(r), null, hasBody(r) ? {} : undefined), (s) => s === 401, 'no token'),
      (r) => !isPublic(r),
    );
    expect(failures).toEqual([]);
  });

  it('answers 403 to a user on a staff route', async () => {
    const failures = await walk(
      async (r) =>
        badAnswer(await call(r, fill(r), a.auth, hasBody(r) ? {} : undefined), (s) => s === 403, 'as a user'),
      isStaff,
    );
    expect(failures).toEqual([]);
  });

  it("answers 404 for another tenant's ids on reads and deletes, and never 2xx on writes", async () => {
    const failures = await walk(
      async (r) => {
        const res = await call(r, fill(r, 'theirs'), a.auth, hasBody(r) ? {} : undefined);
        const reads = r.method === 'GET' || r.method === 'DELETE';
        return badAnswer(res, (s) => (reads ? s === 404 : s >= 400 && s < 500), "another tenant's id");
      },
      (r) => namesTheirs(r) && !isStaff(r) && !isPublic(r),
    );
    expect(failures).toEqual([]);
    // Nothing of B's changed: the sync, its app and the connection are all still there.
    const mine = await t.app.inject({ url: `/rest/core-bases/${theirs.coreBase}`, headers: b.auth });
    expect(mine.statusCode).toBe(200);
    expect(mine.json().leftExternalBase?.id).toBe(theirs.externalBase);
    const conn = await t.app.inject({
      url: `/rest/external-connections/${theirs.connection}`,
      headers: b.auth,
    });
    expect(conn.statusCode).toBe(200);
    const hooks = (await t.app.inject({ url: '/rest/developer/webhooks', headers: b.auth })).json();
    expect(hooks.items).toEqual([expect.objectContaining({ id: theirs.webhook, paused: false })]);
    const tokens = (await t.app.inject({ url: '/rest/developer/tokens', headers: b.auth })).json();
    expect(tokens.items.map((x: { id: string }) => x.id)).toEqual([theirs.apiToken]);
    const blended = await t.ctx.db
      .selectFrom('blended_table')
      .select('id')
      .where('id', '=', theirs.blendedTable as string)
      .executeTakeFirst();
    expect(blended?.id).toBe(theirs.blendedTable);
    for (const url of [
      `/rest/sync-errors/${theirs.syncError}`,
      `/rest/sync-logs/${theirs.syncLog}`,
      `/rest/sync-preview/${theirs.preview}`,
      `/rest/git-sync/${theirs.gitSync}`,
      `/rest/api-import/${theirs.apiImport}`,
    ])
      expect((await t.app.inject({ url, headers: b.auth })).statusCode, url).toBe(200);
  });

  it('answers 400 in the envelope for a NUL byte and for an unknown query parameter', async () => {
    const user = (r: Route) => (isStaff(r) ? null : a.auth);
    const failures = await walk(
      async (r) =>
        badAnswer(
          await call(r, `${fill(r)}?name=a%00b`, user(r), hasBody(r) ? {} : undefined),
          (s) => s === 400,
          'a NUL byte',
        ) ??
        badAnswer(
          await call(r, `${fill(r)}?zz_not_a_parameter=1`, user(r), hasBody(r) ? {} : undefined),
          (s) => s === 400,
          'an unknown query parameter',
        ),
      (r) => !isStaff(r) && !isPublic(r),
    );
    expect(failures).toEqual([]);
  });

  it('answers 400 in the envelope for an unknown body field and a body of the wrong type, never 5xx', async () => {
    const failures = await walk(
      async (r) =>
        badAnswer(
          await call(r, fill(r), a.auth, { zz_not_a_field: 1 }),
          (s) => s === 400,
          'an unknown field',
        ) ??
        badAnswer(await call(r, fill(r), a.auth, '[1,2,3]'), (s) => s === 400, 'a body of the wrong type') ??
        badAnswer(
          await call(r, fill(r), a.auth, '{"name": "a\\u0000b"}'),
          (s) => s === 400,
          'a NUL byte in the body',
        ),
      (r) => hasBody(r) && !isStaff(r) && !isPublic(r),
    );
    expect(failures).toEqual([]);
  });
});
