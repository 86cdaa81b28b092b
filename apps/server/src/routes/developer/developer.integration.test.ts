import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setPublicHostsOnly } from '@lockstep/connectors';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { handleSyncRun } from '../../jobs/sync-run';

// Issue 23 item 2: personal API tokens on the REST API, and webhooks out of a real
// PostgreSQL <-> PostgreSQL run, signed, retried and logged.
let t: TestApp;
let me: Awaited<ReturnType<typeof signUp>>;
let other: Awaited<ReturnType<typeof signUp>>;
let api: Api;
const json = { 'content-type': 'application/json' };

type Received = { path: string; headers: http.IncomingHttpHeaders; body: string };
const received: Received[] = [];
/** /flaky answers 500 to the first two deliveries of each event, then 200. */
const flakySeen = new Map<string, number>();
let receiver: http.Server;
let receiverUrl = '';

beforeAll(async () => {
  // Retries a second apart (then 2, 4 s...), not the product's 30 s, so the test sees them.
  process.env.LOCKSTEP_WEBHOOK_RETRY_DELAY_SECONDS = '1';
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      const id = `${req.url} ${String(req.headers['lockstep-event-id'])}`;
      flakySeen.set(id, (flakySeen.get(id) ?? 0) + 1);
      if (req.url === '/flaky' && (flakySeen.get(id) ?? 0) <= 2) {
        res.writeHead(500).end('not today');
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await createTestApp();
  me = await signUp(t.app, 'developer-me@test.test');
  other = await signUp(t.app, 'developer-other@test.test');
  api = apiAs(t.app, me.auth);
  for (const u of [me, other])
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...u.auth, ...json },
      payload: { productType: 'pro' },
    });
}, 60_000);
afterAll(async () => {
  delete process.env.LOCKSTEP_WEBHOOK_RETRY_DELAY_SECONDS;
  await t?.close();
  await new Promise((r) => receiver?.close(r));
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token: string, payload?: object) =>
  t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...(payload ? json : {}) },
    ...(payload ? { payload } : {}),
  });

describe('personal API tokens', () => {
  it('read the REST API as their user, shown once and listed by prefix only; another user’s base is 404', async () => {
    const mine = await api('POST', '/rest/core-bases', { name: 'mine' });
    const theirs = (
      await t.app.inject({
        method: 'POST',
        url: '/rest/core-bases',
        headers: { ...other.auth, ...json },
        payload: { name: 'theirs' },
      })
    ).json();
    const created = await api('POST', '/rest/developer/tokens', { name: 'ci', scopes: ['read'] });
    expect(created.token).toMatch(/^lst_[A-Za-z0-9_-]{40,}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);

    const list = await call('GET', '/rest/core-bases', created.token);
    expect(list.statusCode, list.body).toBe(200);
    const ids = JSON.stringify(list.json());
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
    const foreign = await call('GET', `/rest/core-bases/${theirs.id}`, created.token);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ statusCode: 404, response: { code: 'not_found' } });

    // Listed without the token itself; stored as its sha256 only.
    const tokens = await api('GET', '/rest/developer/tokens');
    expect(tokens.items).toEqual([
      expect.objectContaining({ id: created.id, name: 'ci', scopes: ['read'], prefix: created.prefix }),
    ]);
    expect(JSON.stringify(tokens)).not.toContain(created.token);
    const row = await t.ctx.db
      .selectFrom('api_token')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token);
  });

  it('with only the read scope cannot write (403 in the envelope); with write it can', async () => {
    const reader = await api('POST', '/rest/developer/tokens', { name: 'reader', scopes: ['read'] });
    const refused = await call('POST', '/rest/core-bases', reader.token, { name: 'nope' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      statusCode: 403,
      path: '/rest/core-bases',
      response: { code: 'insufficient_scope', userFacingMessage: expect.stringContaining('read scope') },
    });
    const list = (await call('GET', '/rest/core-bases', reader.token)).json();
    expect(JSON.stringify(list)).not.toContain('"nope"');
    const writer = await api('POST', '/rest/developer/tokens', { name: 'writer', scopes: ['read', 'write'] });
    const made = await call('POST', '/rest/core-bases', writer.token, { name: 'by token' });
    expect(made.statusCode, made.body).toBe(201);
    // A token does not mint tokens.
    const minted = await call('POST', '/rest/developer/tokens', writer.token, {
      name: 'x',
      scopes: ['read'],
    });
    expect(minted.statusCode).toBe(403);
  });

  it('stops working at once when revoked (401), and records when it was last used', async () => {
    const created = await api('POST', '/rest/developer/tokens', { name: 'short-lived', scopes: ['read'] });
    const lastUsed = async () =>
      (await api('GET', '/rest/developer/tokens')).items.find((x: { id: string }) => x.id === created.id)
        ?.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    expect((await call('GET', '/rest/users/current', created.token)).statusCode).toBe(200);
    const used = await lastUsed();
    expect(used).not.toBeNull();
    expect(Date.parse(used)).toBeGreaterThanOrEqual(before - 1000);

    // Another user cannot revoke it.
    const foreign = await t.app.inject({
      method: 'DELETE',
      url: `/rest/developer/tokens/${created.id}`,
      headers: other.auth,
    });
    expect(foreign.statusCode).toBe(404);
    expect((await call('GET', '/rest/users/current', created.token)).statusCode).toBe(200);

    await api('DELETE', `/rest/developer/tokens/${created.id}`);
    const after = await call('GET', '/rest/users/current', created.token);
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({
      statusCode: 401,
      response: { userFacingMessage: expect.stringMatching(/revoked/) },
    });
    expect((await api('GET', '/rest/developer/tokens')).items.map((x: { id: string }) => x.id)).not.toContain(
      created.id,
    );
    // An unknown token of the right shape is 401 too.
    expect(
      (await call('GET', '/rest/users/current', `lst_${randomBytes(32).toString('base64url')}`)).statusCode,
    ).toBe(401);
  });
});

/** sha256 hex of the token (what the server stores). */
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

function verify(secret: string, r: Received) {
  const header = String(r.headers['lockstep-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest('hex');
  return expected === m[2] && Math.abs(Date.now() / 1000 - Number(m[1])) < 300;
}

describe('webhooks out', () => {
  it('refuses bad input in the envelope, and a private address outside local mode', async () => {
    for (const payload of [
      { url: 'not a url', events: ['sync.run.finished'] },
      { url: `${receiverUrl}/x`, events: [] },
      { url: `${receiverUrl}/x`, events: ['no.such.event'] },
      { url: 'ftp://example.com/x', events: ['issue.opened'] },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/rest/developer/webhooks',
        headers: { ...me.auth, ...json },
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({
        statusCode: 400,
        response: { userFacingMessage: expect.anything() },
      });
    }
    setPublicHostsOnly(true);
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/rest/developer/webhooks',
        headers: { ...me.auth, ...json },
        payload: { url: `${receiverUrl}/internal`, events: ['issue.opened'] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ response: { code: 'url_not_allowed' } });
    } finally {
      setPublicHostsOnly(false);
    }
  });

  it('sends a signed sync.run.finished and record.changed after a real PostgreSQL run, retries a 500 and logs every attempt', async () => {
    const good = await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/good`,
      events: ['sync.run.finished', 'record.changed'],
    });
    expect(good.secret).toMatch(/^whsec_/);
    const flaky = await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/flaky`,
      events: ['sync.run.finished'],
    });
    const paused = await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/paused`,
      events: ['sync.run.finished', 'record.changed'],
    });
    await api('PATCH', `/rest/developer/webhooks/${paused.id}`, { paused: true });
    // The secret is shown once: the list does not carry it.
    expect(JSON.stringify(await api('GET', '/rest/developer/webhooks'))).not.toContain(good.secret);

    const suffix = randomBytes(4).toString('hex');
    const urls = { left: '', right: '' };
    for (const side of ['left', 'right'] as const) {
      await ensureDatabase(inject('adminDatabaseUrl'), `wh_${side}_${suffix}`);
      urls[side] = databaseUrl(`wh_${side}_${suffix}`);
      await query(
        urls[side],
        'create table people (id serial primary key, email text not null unique, name text)',
      );
    }
    await query(
      urls.left,
      `insert into people (email, name) values ('ada@x.test', 'Ada'), ('grace@x.test', 'Grace')`,
    );
    const sync = await setUpPeopleSync(api, urls, { name: 'webhooks' });
    const preview = await api('POST', '/rest/sync-preview/create', { coreBaseId: sync.id });
    await until(
      async () => (await api('GET', `/rest/sync-preview/${preview.id}`)).status === 'in_review',
      'planned',
    );
    await api('PATCH', `/rest/sync-preview/${preview.id}`, { status: 'applying' });
    await until(
      async () => (await api('GET', `/rest/sync-preview/${preview.id}`)).status === 'done',
      'applied',
    );

    const events = (path: string, type: string) =>
      received.filter((r) => r.path === path && JSON.parse(r.body).type === type);
    await until(
      async () => events('/good', 'sync.run.finished').length > 0,
      'the run finished event',
      30_000,
    );
    const finished = events('/good', 'sync.run.finished')[0] as Received;
    expect(verify(good.secret, finished)).toBe(true);
    expect(verify(flaky.secret, finished)).toBe(false);
    const event = JSON.parse(finished.body);
    expect(event).toMatchObject({
      id: expect.any(String),
      type: 'sync.run.finished',
      data: {
        coreBaseId: sync.id,
        status: 'done',
        syncLogId: expect.any(String),
        counts: expect.any(Object),
      },
    });
    expect(finished.headers['lockstep-event-id']).toBe(event.id);

    // The run's writes, batched: one record.changed for the run, both creates on the right.
    await until(async () => events('/good', 'record.changed').length > 0, 'the record changed event', 30_000);
    const changed = JSON.parse((events('/good', 'record.changed')[0] as Received).body);
    expect(verify(good.secret, events('/good', 'record.changed')[0] as Received)).toBe(true);
    expect(changed.data.syncLogId).toBe(event.data.syncLogId);
    const creates = changed.data.changes.filter(
      (c: { side: string; kind: string }) => c.side === 'right' && c.kind === 'create',
    );
    expect(creates.reduce((n: number, c: { recordCount: number }) => n + c.recordCount, 0)).toBe(2);
    expect(creates[0].tablePair).toMatchObject({ id: expect.any(String), leftTableId: expect.any(String) });

    // The flaky receiver: 500, 500, then 200, and the log shows the three attempts of one event.
    await until(
      async () =>
        (await api('GET', `/rest/developer/webhooks/${flaky.id}/deliveries`)).items.some(
          (a: { statusCode: number }) => a.statusCode === 200,
        ),
      'the flaky receiver got it on a retry',
      60_000,
    );
    const log = await api('GET', `/rest/developer/webhooks/${flaky.id}/deliveries?take=50`);
    const firstEventId = log.items.at(-1).eventId;
    const ofEvent = log.items.filter((a: { eventId: string }) => a.eventId === firstEventId).reverse();
    expect(ofEvent.map((a: { attempt: number; statusCode: number }) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(ofEvent[0]).toMatchObject({
      eventType: 'sync.run.finished',
      error: expect.stringContaining('500'),
    });
    expect(ofEvent[2].error).toBeNull();
    const flakyBodies = received.filter((r) => r.path === '/flaky' && JSON.parse(r.body).id === firstEventId);
    expect(flakyBodies).toHaveLength(3);
    expect(flakyBodies.every((r) => verify(flaky.secret, r))).toBe(true);
    // A paused subscription is sent nothing.
    expect(received.filter((r) => r.path === '/paused')).toEqual([]);
    expect((await api('GET', `/rest/developer/webhooks/${paused.id}/deliveries`)).total).toBe(0);
    // Paged: take 1 skips to the next attempt.
    const page = await api('GET', `/rest/developer/webhooks/${flaky.id}/deliveries?skip=1&take=1`);
    expect(page).toMatchObject({ skip: 1, take: 1, total: log.total });
    expect(page.items[0].id).toBe(log.items[1].id);
  }, 120_000);

  it('sends issue.opened when a run opens an issue and issue.resolved when a later run resolves it', async () => {
    const sub = await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/issues`,
      events: ['issue.opened', 'issue.resolved'],
    });
    const suffix = randomBytes(4).toString('hex');
    const urls = { left: '', right: '' };
    for (const side of ['left', 'right'] as const) {
      await ensureDatabase(inject('adminDatabaseUrl'), `whi_${side}_${suffix}`);
      urls[side] = databaseUrl(`whi_${side}_${suffix}`);
    }
    await query(
      urls.left,
      'create table people (id serial primary key, email text not null unique, name text)',
    );
    // The right side requires a name the left leaves empty: that record waits as an issue.
    await query(
      urls.right,
      'create table people (id serial primary key, email text not null unique, name text not null)',
    );
    await query(
      urls.left,
      `insert into people (email, name) values ('ada@x.test', 'Ada'), ('nameless@x.test', null)`,
    );
    const sync = await setUpPeopleSync(api, urls, { name: 'issue webhooks' });
    const preview = await api('POST', '/rest/sync-preview/create', { coreBaseId: sync.id });
    await until(
      async () => (await api('GET', `/rest/sync-preview/${preview.id}`)).status === 'in_review',
      'planned',
    );
    await api('PATCH', `/rest/sync-preview/${preview.id}`, { status: 'applying' });
    await until(
      async () => (await api('GET', `/rest/sync-preview/${preview.id}`)).status === 'done',
      'applied',
    );

    const ofType = (type: string) =>
      received
        .filter((r) => r.path === '/issues')
        .map((r) => ({ r, e: JSON.parse(r.body) }))
        .filter((x) => x.e.type === type);
    await until(async () => ofType('issue.opened').length > 0, 'the issue opened event', 30_000);
    const opened = ofType('issue.opened');
    expect(opened).toHaveLength(1);
    expect(verify(sub.secret, (opened[0] as { r: Received }).r)).toBe(true);
    const issueId = opened[0]?.e.data.issueId;
    expect(opened[0]?.e.data).toMatchObject({ coreBaseId: sync.id, code: 'required_missing', side: 'left' });

    await query(urls.left, `update people set name = 'Named' where email = 'nameless@x.test'`);
    await until(async () => ofType('issue.resolved').length > 0, 'the issue resolved event', 60_000);
    expect(ofType('issue.resolved').map((x) => x.e.data.issueId)).toEqual([issueId]);
    // Opened once, not again with each later run.
    expect(ofType('issue.opened')).toHaveLength(1);
  }, 120_000);

  it('sends sync.run.finished with status failed and the error when a run fails', async () => {
    await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/failed`,
      events: ['sync.run.finished'],
    });
    const base = await api('POST', '/rest/core-bases', { name: 'fails' });
    const result = await handleSyncRun(
      t.ctx.db,
      t.ctx.boss,
      { runChunk: async () => ({ result: 'failed', error: 'The left app refused the sign-in.' }) },
      { coreBaseId: base.id, trigger: 'preview' },
      { chain: false },
    );
    expect(result).toBe('failed');
    await until(async () => received.some((r) => r.path === '/failed'), 'the failed run event', 30_000);
    const event = JSON.parse((received.find((r) => r.path === '/failed') as Received).body);
    expect(event).toMatchObject({
      type: 'sync.run.finished',
      data: { coreBaseId: base.id, status: 'failed', error: 'The left app refused the sign-in.' },
    });
  });

  it('sends a signed test event on demand, pauses, and is 404 to another user', async () => {
    const sub = await api('POST', '/rest/developer/webhooks', {
      url: `${receiverUrl}/test`,
      events: ['issue.opened'],
    });
    const attempt = await api('POST', `/rest/developer/webhooks/${sub.id}/test`);
    expect(attempt).toMatchObject({ eventType: 'test', attempt: 1, statusCode: 200, error: null });
    const got = received.filter((r) => r.path === '/test');
    expect(got).toHaveLength(1);
    expect(verify(sub.secret, got[0] as Received)).toBe(true);

    const paused = await api('PATCH', `/rest/developer/webhooks/${sub.id}`, { paused: true });
    expect(paused.paused).toBe(true);

    for (const [method, url] of [
      ['GET', `/rest/developer/webhooks/${sub.id}/deliveries`],
      ['POST', `/rest/developer/webhooks/${sub.id}/test`],
      ['PATCH', `/rest/developer/webhooks/${sub.id}`],
      ['DELETE', `/rest/developer/webhooks/${sub.id}`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { ...other.auth, ...(method === 'PATCH' ? json : {}) },
        ...(method === 'PATCH' ? { payload: { paused: false } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, response: { code: 'not_found' } });
    }
    expect(received.filter((r) => r.path === '/test')).toHaveLength(1);
    const theirList = (await t.app.inject({ url: '/rest/developer/webhooks', headers: other.auth })).json();
    expect(theirList.items).toEqual([]);

    await api('DELETE', `/rest/developer/webhooks/${sub.id}`);
    expect(
      (await api('GET', '/rest/developer/webhooks')).items.map((s: { id: string }) => s.id),
    ).not.toContain(sub.id);
  });
});
