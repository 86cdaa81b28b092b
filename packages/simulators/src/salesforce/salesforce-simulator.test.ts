/**
 * Plain-fetch tests of what the jsforce contract test does not reach: raw response shapes and
 * headers, limits, OAuth details (PKCE failures, signature, revoke), outbound messages, faults,
 * external-id routes and Bulk 2.0 result paging.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_OAUTH_CLIENT,
  type SalesforceSimulator,
  type StartSalesforceSimulatorOptions,
  startSalesforceSimulator,
} from './index.ts';

const V = '/services/data/v62.0';
const started: SalesforceSimulator[] = [];
const servers: Server[] = [];

async function start(options: StartSalesforceSimulatorOptions = {}): Promise<SalesforceSimulator> {
  const sim = await startSalesforceSimulator({ idSeed: 5, clock: new ManualClock(), ...options });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
  while (servers.length) {
    const s = servers.pop() as Server;
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

type Json = Record<string, unknown> & { records?: Record<string, unknown>[] };

async function call(
  sim: SalesforceSimulator,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? sim.token : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: res.status, body, text, headers: res.headers };
}

const clockOf = (sim: SalesforceSimulator) => sim.clock as ManualClock;

describe('versions, resources and errors', () => {
  it('lists versions without a session; versioned routes need one and answer 401 INVALID_SESSION_ID', async () => {
    const sim = await start();
    const versions = await call(sim, '/services/data/', { token: null });
    expect(versions.status).toBe(200);
    expect(versions.body).toContainEqual({
      label: "Winter '25",
      url: '/services/data/v62.0',
      version: '62.0',
    });
    const noAuth = await call(sim, `${V}/sobjects`, { token: null });
    expect(noAuth.status).toBe(401);
    expect(noAuth.body).toEqual([{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]);
    sim.revokeToken(sim.token);
    expect((await call(sim, `${V}/sobjects`)).status).toBe(401);
  });

  it('serves the resources of a version; an unknown version or route is a 404 NOT_FOUND', async () => {
    const sim = await start();
    const res = await call(sim, `${V}/`);
    expect(res.body).toMatchObject({ sobjects: `${V}/sobjects`, query: `${V}/query`, limits: `${V}/limits` });
    const old = await call(sim, '/services/data/v12.0/sobjects');
    expect(old.status).toBe(404);
    expect(old.body).toEqual([{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }]);
    expect((await call(sim, `${V}/sobjects/Nope__c/describe`)).status).toBe(404);
    const put = await call(sim, `${V}/sobjects/Contact/${sim.org?.contacts[0]}`, { method: 'PUT', body: {} });
    expect(put.status).toBe(405);
    expect(put.body).toEqual([
      {
        message: "HTTP Method 'PUT' not allowed. Allowed are GET,PATCH,DELETE",
        errorCode: 'METHOD_NOT_ALLOWED',
      },
    ]);
  });

  it('reads a path segment that is not an id as an external id field, and upserts by external id', async () => {
    const sim = await start();
    const notId = await call(sim, `${V}/sobjects/Contact/not-an-id`);
    expect(notId.status).toBe(404);
    expect(notId.body).toEqual([
      {
        message: 'Provided external ID field does not exist or is not accessible: not-an-id',
        errorCode: 'NOT_FOUND',
      },
    ]);
    const byKey = await call(sim, `${V}/sobjects/Account/External_Key__c/ACC-0001`);
    expect((byKey.body as Json).Id).toBe(sim.org?.accounts[0]);
    const created = await call(sim, `${V}/sobjects/Account/External_Key__c/ACC-9999`, {
      method: 'PATCH',
      body: { Name: 'Upserted' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, created: true });
    const again = await call(sim, `${V}/sobjects/Account/External_Key__c/ACC-9999`, {
      method: 'PATCH',
      body: { Name: 'Upserted again' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: (created.body as Json).id, created: false });
  });

  it('rejects a body that is not JSON with JSON_PARSER_ERROR', async () => {
    const sim = await start();
    const res = await call(sim, `${V}/sobjects/Contact`, { method: 'POST', body: '{nope' });
    expect(res.status).toBe(400);
    expect((res.body as { errorCode: string }[])[0]?.errorCode).toBe('JSON_PARSER_ERROR');
  });
});

describe('query', () => {
  it('answers relative nextRecordsUrls, honours Sforce-Query-Options batchSize, and expires cursors', async () => {
    const sim = await start({ seed: { contacts: 450 } });
    const first = await call(sim, `${V}/query?q=${encodeURIComponent('SELECT Id FROM Contact')}`, {
      headers: { 'Sforce-Query-Options': 'batchSize=200' },
    });
    const body = first.body as Json & { nextRecordsUrl: string; totalSize: number; done: boolean };
    expect(body.totalSize).toBe(450);
    expect(body.done).toBe(false);
    expect(body.records).toHaveLength(200);
    expect(body.nextRecordsUrl).toMatch(/^\/services\/data\/v62\.0\/query\/01g[A-Za-z0-9]{15}-200$/);
    const second = await call(sim, body.nextRecordsUrl);
    expect((second.body as Json).records).toHaveLength(250);
    expect((second.body as Json).done).toBe(true);
    expect((second.body as Json).nextRecordsUrl).toBeUndefined();

    const again = await call(sim, `${V}/query?q=${encodeURIComponent('SELECT Id FROM Contact')}`, {
      headers: { 'Sforce-Query-Options': 'batchSize=200' },
    });
    clockOf(sim).advance(15 * 60_000 + 1);
    const stale = await call(sim, (again.body as { nextRecordsUrl: string }).nextRecordsUrl);
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual([{ message: 'invalid query locator', errorCode: 'INVALID_QUERY_LOCATOR' }]);
  });

  it('shows a malformed query with the caret and row/column, as Salesforce does', async () => {
    const sim = await start();
    const res = await call(sim, `${V}/query?q=${encodeURIComponent('SELECT Id, Nope FROM Contact')}`);
    expect(res.status).toBe(400);
    const [err] = res.body as { message: string; errorCode: string }[];
    expect(err?.errorCode).toBe('INVALID_FIELD');
    expect(err?.message).toMatch(
      /^\nSELECT Id, Nope FROM Contact\n {11}\^\nERROR at Row:1:Column:12\nNo such column 'Nope'/,
    );
    const none = await call(sim, `${V}/query`);
    expect(none.body).toEqual([
      { message: 'A query string has to be specified', errorCode: 'MALFORMED_QUERY' },
    ]);
  });
});

describe('limits', () => {
  it('puts Sforce-Limit-Info on every API response and counts a rolling 24 hours', async () => {
    const sim = await start({ rateLimit: { dailyApiRequests: 3 } });
    const a = await call(sim, `${V}/sobjects`);
    expect(a.headers.get('sforce-limit-info')).toBe('api-usage=1/3');
    const bad = await call(sim, `${V}/sobjects/Contact/003000000000000AAA`);
    expect(bad.status).toBe(404);
    expect(bad.headers.get('sforce-limit-info')).toBe('api-usage=2/3');
    clockOf(sim).advance(3_600_000);
    const limits = await call(sim, `${V}/limits`);
    expect((limits.body as { DailyApiRequests: unknown }).DailyApiRequests).toEqual({ Max: 3, Remaining: 0 });
    const refused = await call(sim, `${V}/sobjects`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual([
      { message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' },
    ]);
    expect(refused.headers.get('sforce-limit-info')).toBe('api-usage=3/3');
    // The first two calls leave the window 24 hours after they were made; the third an hour later.
    clockOf(sim).advance(23 * 3_600_000);
    expect((await call(sim, `${V}/sobjects`)).headers.get('sforce-limit-info')).toBe('api-usage=2/3');
    // The versions list is free.
    expect((await call(sim, '/services/data')).headers.get('sforce-limit-info')).toBeNull();
  });
});

describe('OAuth', () => {
  const client = DEFAULT_OAUTH_CLIENT;
  const redirectUri = 'http://localhost:3000/oauth/callback';

  async function authorize(sim: SalesforceSimulator, params: Record<string, string>): Promise<URL> {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: redirectUri,
      ...params,
    });
    const res = await fetch(`${sim.url}/services/oauth2/authorize?${q}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location') as string);
  }

  async function token(sim: SalesforceSimulator, params: Record<string, string>) {
    const res = await fetch(`${sim.url}/services/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  it('checks the PKCE verifier, signs the response and refreshes without a new refresh token', async () => {
    const sim = await start();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const codeGrant = (code: string, extra: Record<string, string> = {}) =>
      token(sim, {
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: redirectUri,
        ...extra,
      });

    const missing = await codeGrant(
      (await authorize(sim, { code_challenge: challenge })).searchParams.get('code') as string,
    );
    expect(missing).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'invalid code verifier' },
    });
    const wrong = await codeGrant(
      (await authorize(sim, { code_challenge: challenge })).searchParams.get('code') as string,
      {
        code_verifier: 'x'.repeat(43),
      },
    );
    expect(wrong.body.error).toBe('invalid_request');

    const code = (
      await authorize(sim, { code_challenge: challenge, scope: 'api refresh_token' })
    ).searchParams.get('code');
    const ok = await codeGrant(code as string, { code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body).sort()).toEqual(
      [
        'access_token',
        'id',
        'instance_url',
        'issued_at',
        'refresh_token',
        'scope',
        'signature',
        'token_type',
      ].sort(),
    );
    expect(ok.body.instance_url).toBe(sim.url);
    expect(ok.body.id).toBe(`${sim.url}/id/${sim.state.orgId}/${sim.state.userId}`);
    expect(ok.body.issued_at).toBe(String(sim.clock.now()));
    const expected = createHmac('sha256', client.clientSecret)
      .update(`${ok.body.id}${ok.body.issued_at}`)
      .digest('base64');
    expect(ok.body.signature).toBe(expected);
    expect((await call(sim, `${V}/limits`, { token: ok.body.access_token })).status).toBe(200);

    const refreshed = await token(sim, {
      grant_type: 'refresh_token',
      refresh_token: ok.body.refresh_token as string,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBeUndefined();
    expect(refreshed.body.access_token).not.toBe(ok.body.access_token);

    // Revoking the refresh token ends the sessions it issued.
    const revoke = await fetch(`${sim.url}/services/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ok.body.refresh_token as string }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect((await call(sim, `${V}/limits`, { token: refreshed.body.access_token })).status).toBe(401);
    const dead = await token(sim, {
      grant_type: 'refresh_token',
      refresh_token: ok.body.refresh_token as string,
      client_id: client.clientId,
    });
    expect(dead.body).toEqual({ error: 'invalid_grant', error_description: 'expired access/refresh token' });
  });

  it('refuses unknown clients, wrong secrets, mismatched redirects and unsupported grants', async () => {
    const sim = await start();
    const page = await fetch(
      `${sim.url}/services/oauth2/authorize?response_type=code&client_id=nope&redirect_uri=${redirectUri}`,
      {
        redirect: 'manual',
      },
    );
    expect(page.status).toBe(400);
    const mismatch = await fetch(
      `${sim.url}/services/oauth2/authorize?response_type=code&client_id=${client.clientId}&redirect_uri=http://evil.example/cb`,
      { redirect: 'manual' },
    );
    expect(mismatch.status).toBe(400);
    const code = (await authorize(sim, {})).searchParams.get('code') as string;
    const secret = await token(sim, {
      grant_type: 'authorization_code',
      code,
      client_id: client.clientId,
      client_secret: 'no',
      redirect_uri: redirectUri,
    });
    expect(secret.body).toEqual({ error: 'invalid_client', error_description: 'invalid client credentials' });
    const unknown = await token(sim, { grant_type: 'authorization_code', code, client_id: 'nope' });
    expect(unknown.body.error).toBe('invalid_client_id');
    const grant = await token(sim, { grant_type: 'password', client_id: client.clientId });
    expect(grant.body.error).toBe('unsupported_grant_type');
    // An expired code (15 minutes) is refused.
    const late = (await authorize(sim, {})).searchParams.get('code') as string;
    clockOf(sim).advance(15 * 60_000);
    const expired = await token(sim, {
      grant_type: 'authorization_code',
      code: late,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uri: redirectUri,
    });
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'invalid authorization code' });
  });

  it('keeps a session alive while it is used and ends it after the timeout without use', async () => {
    const sim = await start({ oauth: { sessionTimeoutMs: 60_000 } });
    const session = sim.issueSession();
    for (let i = 0; i < 3; i++) {
      clockOf(sim).advance(50_000);
      expect((await call(sim, `${V}/limits`, { token: session })).status).toBe(200);
    }
    clockOf(sim).advance(60_000);
    expect((await call(sim, `${V}/limits`, { token: session })).status).toBe(401);
  });
});

describe('outbound messages', () => {
  type Received = { headers: IncomingHttpHeaders; body: string };

  async function receiver(ack: () => boolean): Promise<{ url: string; received: Received[] }> {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const ok = ack();
        res.writeHead(ok ? 200 : 500, { 'content-type': 'text/xml' });
        res.end(
          ok
            ? '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse></soapenv:Body></soapenv:Envelope>'
            : 'nope',
        );
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/om`, received };
  }

  it('sends a SOAP notifications message for API creates and updates and in-app edits, not for deletes', async () => {
    const rx = await receiver(() => true);
    const sim = await start({
      webhooks: { endpointUrl: rx.url, objects: { Contact: ['LastName', 'Email', 'Title'] } },
    });
    const created = await call(sim, `${V}/sobjects/Contact`, {
      method: 'POST',
      body: { LastName: 'Hook <&>', Email: 'hook@example.com' },
    });
    const id = (created.body as { id: string }).id;
    await sim.flushWebhooks();
    expect(rx.received).toHaveLength(1);
    const msg = rx.received[0] as Received;
    expect(msg.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(msg.headers.soapaction).toBe('""');
    // Salesforce does not sign outbound messages: the receiver checks the OrganizationId.
    expect(Object.keys(msg.headers).filter((h) => /signature/i.test(h))).toEqual([]);
    expect(msg.body).toContain(`<OrganizationId>${sim.state.orgId}</OrganizationId>`);
    expect(msg.body).toContain(`<ActionId>${sim.webhooks?.actionIds.Contact}</ActionId>`);
    expect(msg.body).toContain('<SessionId xsi:nil="true"/>');
    expect(msg.body).toMatch(/<Notification><Id>04l\w{15}<\/Id><sObject xsi:type="sf:Contact"/);
    expect(msg.body).toContain(
      `<sf:Id>${id}</sf:Id><sf:LastName>Hook &lt;&amp;&gt;</sf:LastName><sf:Email>hook@example.com</sf:Email><sf:Title xsi:nil="true"/>`,
    );

    sim.update('Contact', id, { Title: 'Edited in Salesforce' });
    await sim.flushWebhooks();
    expect(rx.received[1]?.body).toContain('<sf:Title>Edited in Salesforce</sf:Title>');
    await call(sim, `${V}/sobjects/Contact/${id}`, { method: 'DELETE' });
    await call(sim, `${V}/sobjects/Account/${sim.org?.accounts[0]}`, {
      method: 'PATCH',
      body: { Rating: 'Hot' },
    });
    await sim.flushWebhooks();
    expect(rx.received).toHaveLength(2);
    expect(sim.webhooks?.deliveries.every((d) => d.acked)).toBe(true);
  });

  it('retries a message that was not acknowledged, with the record as it is now; a session id can be sent', async () => {
    let acks = 0;
    const rx = await receiver(() => acks++ > 0);
    const sim = await start({
      webhooks: { endpointUrl: rx.url, objects: { Lead: ['Status'] }, sendSessionId: true },
    });
    const lead = sim.org?.leads[0] as string;
    sim.update('Lead', lead, { Status: 'Working - Contacted' });
    await sim.flushWebhooks();
    expect(sim.webhooks?.deliveries[0]).toMatchObject({ acked: false, status: 500, attempt: 1 });
    sim.update('Lead', lead, { Status: 'Closed - Not Converted' });
    await sim.flushWebhooks();
    expect(sim.webhooks?.retryFailed()).toBe(0 + 1);
    await sim.flushWebhooks();
    const last = rx.received.at(-1) as Received;
    expect(last.body).toContain('<sf:Status>Closed - Not Converted</sf:Status>');
    const session = /<SessionId>([^<]+)<\/SessionId>/.exec(last.body)?.[1] as string;
    expect((await call(sim, `${V}/limits`, { token: session })).status).toBe(200);
  });
});

describe('faults and request log', () => {
  it('injects statuses, Salesforce limit refusals and dropped connections, and logs requests', async () => {
    const sim = await start();
    sim.faults.next({
      status: 503,
      body: [{ errorCode: 'SERVER_UNAVAILABLE', message: 'down' }],
      path: `${V}/query`,
    });
    sim.faults.next({ kind: 'rate_limit', path: `${V}/sobjects` });
    const q = await call(sim, `${V}/query?q=SELECT+Id+FROM+Lead`);
    expect(q.status).toBe(503);
    const limited = await call(sim, `${V}/sobjects`);
    expect(limited.status).toBe(403);
    expect(limited.body).toEqual([
      { message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' },
    ]);
    expect((await call(sim, `${V}/sobjects`)).status).toBe(200);
    sim.faults.next({ kind: 'drop', path: `${V}/limits` });
    await expect(call(sim, `${V}/limits`)).rejects.toThrow();
    expect(sim.requestLog.byPath()).toMatchObject({ [`GET ${V}/sobjects`]: 2, [`GET ${V}/query`]: 1 });
    expect(sim.requestLog.count({ status: 403 })).toBe(1);
  });
});

describe('Bulk API 2.0 results', () => {
  it('pages query results with maxRecords and a base64 Sforce-Locator ending in null', async () => {
    const sim = await start({ bulk: { processingMs: 10_000 } });
    const job = await call(sim, `${V}/jobs/query`, {
      method: 'POST',
      body: {
        operation: 'query',
        query: 'SELECT Id, Name, Probability, IsWon, CloseDate FROM Opportunity ORDER BY Name',
      },
    });
    const info = job.body as { id: string; state: string; object: string; contentType: string };
    expect(info).toMatchObject({
      state: 'UploadComplete',
      object: 'Opportunity',
      contentType: 'CSV',
      operation: 'query',
    });
    const early = await call(sim, `${V}/jobs/query/${info.id}/results`);
    expect(early.status).toBe(400);
    clockOf(sim).advance(5000);
    expect(((await call(sim, `${V}/jobs/query/${info.id}`)).body as { state: string }).state).toBe(
      'InProgress',
    );
    clockOf(sim).advance(5000);
    expect(((await call(sim, `${V}/jobs/query/${info.id}`)).body as { state: string }).state).toBe(
      'JobComplete',
    );

    const p1 = await call(sim, `${V}/jobs/query/${info.id}/results?maxRecords=5`);
    expect(p1.headers.get('content-type')).toBe('text/csv');
    expect(p1.headers.get('sforce-numberofrecords')).toBe('5');
    expect(p1.headers.get('sforce-locator')).toBe(Buffer.from('5').toString('base64').replace(/=+$/, ''));
    const lines = p1.text.trimEnd().split('\n');
    expect(lines[0]).toBe('"Id","Name","Probability","IsWon","CloseDate"');
    expect(lines).toHaveLength(6);
    const p2 = await call(
      sim,
      `${V}/jobs/query/${info.id}/results?maxRecords=5&locator=${p1.headers.get('sforce-locator')}`,
    );
    const p3 = await call(
      sim,
      `${V}/jobs/query/${info.id}/results?maxRecords=5&locator=${p2.headers.get('sforce-locator')}`,
    );
    expect(p3.headers.get('sforce-numberofrecords')).toBe('2');
    expect(p3.headers.get('sforce-locator')).toBe('null');
  });

  it('fails an ingest job whose CSV names an unknown field, leaving every row unprocessed', async () => {
    const sim = await start({ bulk: { processingMs: 0 } });
    const job = (
      await call(sim, `${V}/jobs/ingest`, {
        method: 'POST',
        body: { object: 'Contact', operation: 'insert' },
      })
    ).body as {
      id: string;
      state: string;
    };
    expect(job.state).toBe('Open');
    const put = await call(sim, `${V}/jobs/ingest/${job.id}/batches`, {
      method: 'PUT',
      body: 'LastName,Nope__c\nA,1\nB,2\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(put.status).toBe(201);
    const closed = await call(sim, `${V}/jobs/ingest/${job.id}`, {
      method: 'PATCH',
      body: { state: 'UploadComplete' },
    });
    expect(closed.body).toMatchObject({
      state: 'Failed',
      errorMessage: 'InvalidBatch : Field name not found : Nope__c',
    });
    const unprocessed = await call(sim, `${V}/jobs/ingest/${job.id}/unprocessedrecords`);
    expect(unprocessed.text).toBe('"LastName","Nope__c"\n"A","1"\n"B","2"\n');
  });
});
