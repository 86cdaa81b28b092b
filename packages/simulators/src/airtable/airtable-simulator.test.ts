import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type AirtableSimulator,
  type StartAirtableSimulatorOptions,
  startAirtableSimulator,
} from './index.ts';

type Json = Record<string, unknown> & {
  records?: { id: string; createdTime: string; fields: Record<string, unknown> }[];
  offset?: string;
  fields?: Record<string, unknown>;
  error?: unknown;
};

const started: AirtableSimulator[] = [];

async function start(options: StartAirtableSimulatorOptions = {}): Promise<AirtableSimulator> {
  const sim = await startAirtableSimulator({ rateLimit: false, idSeed: 42, ...options });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()!.close();
});

async function call(
  sim: AirtableSimulator,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sim.token : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

function crm(sim: AirtableSimulator) {
  if (!sim.crm) throw new Error('not seeded');
  return sim.crm;
}

describe('authentication', () => {
  it('answers 401 AUTHENTICATION_REQUIRED without a token, with a wrong one and after revocation', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const expected = { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } };

    const missing = await call(sim, `/v0/${baseId}/Contacts`, { token: null });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(expected);

    const wrong = await call(sim, `/v0/${baseId}/Contacts`, { token: 'patWrong.token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(expected);

    expect((await call(sim, `/v0/${baseId}/Contacts`)).status).toBe(200);
    sim.revokeToken(sim.token);
    const revoked = await call(sim, `/v0/${baseId}/Contacts`);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual(expected);
  });

  it('answers 403 INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND for a missing scope, base or table', async () => {
    const sim = await start({ tokens: [{ token: 'patReadOnly.x', scopes: ['data.records:read'] }] });
    const { baseId } = crm(sim);
    const write = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      token: 'patReadOnly.x',
      body: { fields: { Name: 'X' } },
    });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ error: { type: 'INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND' } });
    expect((await call(sim, `/v0/appNoSuchBase00000/Contacts`)).status).toBe(403);
    expect((await call(sim, `/v0/${baseId}/NoSuchTable`)).status).toBe(403);
    expect((await call(sim, '/v0/meta/bases', { token: 'patReadOnly.x' })).status).toBe(403);
  });

  it('runs the OAuth authorization code flow with PKCE S256 and single-use refresh tokens', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = new URL('/oauth2/v1/authorize', sim.url);
    const redirectUri = 'http://localhost:5173/oauth/callback';
    authorize.search = new URLSearchParams({
      client_id: 'lockstep-simulator-client',
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'data.records:read schema.bases:read',
      state: 'xyz',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const redirect = await fetch(authorize, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code')!;

    const tokenRequest = (params: Record<string, string>) =>
      fetch(`${sim.url}/oauth2/v1/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'lockstep-simulator-client', ...params }).toString(),
      });

    const badVerifier = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: 'wrong',
    });
    expect(badVerifier.status).toBe(400);
    expect(((await badVerifier.json()) as { error: string }).error).toBe('invalid_grant');

    const ok = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
    const tokens = (await ok.json()) as { access_token: string; refresh_token: string; expires_in: number };
    expect(tokens.expires_in).toBe(3600);
    expect((await call(sim, `/v0/${baseId}/Contacts`, { token: tokens.access_token })).status).toBe(200);
    // Scopes are enforced: no data.records:write.
    expect(
      (
        await call(sim, `/v0/${baseId}/Contacts`, {
          method: 'POST',
          token: tokens.access_token,
          body: { fields: {} },
        })
      ).status,
    ).toBe(403);

    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(reused.status).toBe(400);
  });
});

describe('list records', () => {
  it('pages by 100 with an opaque offset until every record is read once', async () => {
    const sim = await start({ seed: { contacts: 250 } });
    const { baseId, tables } = crm(sim);
    const seen: string[] = [];
    const sizes: number[] = [];
    let offset: string | undefined;
    do {
      const q = new URLSearchParams({ pageSize: '100' });
      if (offset) q.set('offset', offset);
      const page = await call(sim, `/v0/${baseId}/${tables.contacts}?${q}`);
      expect(page.status).toBe(200);
      sizes.push(page.body.records!.length);
      seen.push(...page.body.records!.map((r) => r.id));
      offset = page.body.offset;
    } while (offset);
    expect(sizes).toEqual([100, 100, 50]);
    expect(new Set(seen).size).toBe(250);
    for (const id of seen) expect(id).toMatch(/^rec[A-Za-z0-9]{14}$/);
  });

  it('rejects pageSize over 100 and an invalid offset', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const big = await call(sim, `/v0/${baseId}/Contacts?pageSize=101`);
    expect(big.status).toBe(422);
    expect(big.body).toMatchObject({ error: { type: 'INVALID_REQUEST_UNKNOWN' } });
    const bad = await call(sim, `/v0/${baseId}/Contacts?offset=itrNope/recNope`);
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      error: { type: 'INVALID_OFFSET_VALUE', message: 'The value of offset itrNope/recNope is invalid' },
    });
  });

  it('keys fields by id with returnFieldsByFieldId and omits empty values', async () => {
    const sim = await start();
    const { baseId, tables } = crm(sim);
    const meta = await call(sim, `/v0/meta/bases/${baseId}/tables`);
    const contactsMeta = (meta.body.tables as { id: string; fields: { id: string; name: string }[] }[]).find(
      (t) => t.id === tables.contacts,
    )!;
    const idOf = (name: string) => contactsMeta.fields.find((f) => f.name === name)!.id;

    const created = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { fields: { Name: 'Empty Emma', Notes: '', Phone: null, Company: [] } },
    });
    expect(created.status).toBe(200);
    const rec = created.body as unknown as {
      id: string;
      createdTime: string;
      fields: Record<string, unknown>;
    };
    expect(rec.createdTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    // Only non-empty values and computed fields come back.
    expect(Object.keys(rec.fields).sort()).toEqual(['Created', 'Last Modified', 'Name']);

    const byId = await call(sim, `/v0/${baseId}/${tables.contacts}/${rec.id}?returnFieldsByFieldId=true`);
    expect(byId.body.fields).toEqual({
      [idOf('Name')]: 'Empty Emma',
      [idOf('Created')]: rec.createdTime,
      [idOf('Last Modified')]: rec.createdTime,
    });

    const page = await call(sim, `/v0/${baseId}/${tables.contacts}?returnFieldsByFieldId=true&pageSize=3`);
    for (const r of page.body.records!) {
      for (const key of Object.keys(r.fields)) expect(key).toMatch(/^fld[A-Za-z0-9]{14}$/);
    }

    // A false checkbox reads back as absent.
    const deal = await call(sim, `/v0/${baseId}/Deals`, {
      method: 'POST',
      body: { fields: { Deal: 'D', Won: false } },
    });
    expect(deal.body.fields).not.toHaveProperty('Won');
  });

  it('filters incrementally with IS_AFTER(LAST_MODIFIED_TIME(), iso) and sorts', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00.000Z');
    const sim = await start({ clock });
    const { baseId, contactIds } = crm(sim);
    clock.advance(60_000);
    const since = new Date(clock.now()).toISOString();
    clock.advance(5_000);
    sim.mutateRecord(baseId, 'Contacts', contactIds[3]!, { Notes: 'Edited in Airtable' });
    await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'PATCH',
      body: { records: [{ id: contactIds[7], fields: { Status: 'Customer' } }] },
    });

    const formula = `IS_AFTER(LAST_MODIFIED_TIME(), '${since}')`;
    const q = new URLSearchParams({
      filterByFormula: formula,
      'sort[0][field]': 'Last Modified',
      'sort[0][direction]': 'asc',
    });
    const res = await call(sim, `/v0/${baseId}/Contacts?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.records!.map((r) => r.id).sort()).toEqual([contactIds[3], contactIds[7]].sort());
    expect(res.body.records![0]!.fields['Last Modified']).toBe(new Date(clock.now()).toISOString());

    // The comparison form works too, and a broken formula is Airtable's 422.
    const cmp = await call(
      sim,
      `/v0/${baseId}/Contacts?${new URLSearchParams({ filterByFormula: `LAST_MODIFIED_TIME() > '${since}'` })}`,
    );
    expect(cmp.body.records).toHaveLength(2);
    const broken = await call(
      sim,
      `/v0/${baseId}/Contacts?${new URLSearchParams({ filterByFormula: 'IS_AFTER(' })}`,
    );
    expect(broken.status).toBe(422);
    expect(broken.body).toMatchObject({ error: { type: 'INVALID_FILTER_BY_FORMULA' } });
  });
});

describe('write records', () => {
  it('rejects 11 records in one create with the documented 422 and creates 10', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const records = (n: number) => Array.from({ length: n }, (_, i) => ({ fields: { Name: `Bulk ${i}` } }));
    const before = sim.state.listRecords(baseId, 'Contacts').length;
    const tooMany = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { records: records(11) },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toEqual({
      error: {
        type: 'INVALID_RECORDS',
        message: 'A maximum of 10 records can be created per request but you have provided 11.',
      },
    });
    expect(sim.state.listRecords(baseId, 'Contacts')).toHaveLength(before);
    const ten = await call(sim, `/v0/${baseId}/Contacts`, { method: 'POST', body: { records: records(10) } });
    expect(ten.status).toBe(200);
    expect(ten.body.records).toHaveLength(10);
  });

  it('refuses read-only fields and unknown select options unless typecast', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const computed = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { fields: { Name: 'X', Created: '2020-01-01T00:00:00.000Z' } },
    });
    expect(computed.status).toBe(422);
    expect(computed.body).toEqual({
      error: {
        type: 'INVALID_VALUE_FOR_COLUMN',
        message: 'Field "Created" cannot accept a value because the field is computed',
      },
    });

    const unknownOption = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { fields: { Name: 'X', Status: 'Partner' } },
    });
    expect(unknownOption.status).toBe(422);
    expect(unknownOption.body).toEqual({
      error: {
        type: 'INVALID_MULTIPLE_CHOICE_OPTIONS',
        message: 'Insufficient permissions to create new select option ""Partner""',
      },
    });

    const unknownField = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { fields: { Nope: 1 } },
    });
    expect(unknownField.body).toEqual({
      error: { type: 'UNKNOWN_FIELD_NAME', message: 'Unknown field name: "Nope"' },
    });

    const typecast = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'POST',
      body: { fields: { Name: 'X', Status: 'Partner' }, typecast: true },
    });
    expect(typecast.status).toBe(200);
    expect(typecast.body.fields).toMatchObject({ Status: 'Partner' });
    const meta = await call(sim, `/v0/meta/bases/${baseId}/tables`);
    const status = (
      meta.body.tables as {
        name: string;
        fields: { name: string; options?: { choices: { name: string }[] } }[];
      }[]
    )
      .find((t) => t.name === 'Contacts')!
      .fields.find((f) => f.name === 'Status')!;
    expect(status.options!.choices.map((c) => c.name)).toContain('Partner');
  });

  it('normalises values the way Airtable stores them (post-image differs from input)', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    const res = await call(sim, `/v0/${baseId}/Deals`, {
      method: 'POST',
      body: {
        fields: {
          Deal: 'Norm',
          Amount: 10.005,
          Probability: 0.456,
          'Close Date': '2026-05-01T15:00:00Z',
          Stage: 'Proposal',
        },
      },
    });
    expect(res.body.fields).toMatchObject({
      Amount: 10.01,
      Probability: 0.46,
      'Close Date': '2026-05-01',
      Summary: 'Norm (Proposal)',
    });
    expect(typeof res.body.fields!['Deal ID']).toBe('number');
  });

  it('upserts with performUpsert.fieldsToMergeOn', async () => {
    const sim = await start();
    const { baseId, contactIds } = crm(sim);
    const existing = sim.state.getRecord(baseId, 'Contacts', contactIds[0]!)!;
    const email = existing.fields.Email as string;
    const before = sim.state.listRecords(baseId, 'Contacts').length;
    const res = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'PATCH',
      body: {
        performUpsert: { fieldsToMergeOn: ['Email'] },
        records: [
          { fields: { Email: email, Status: 'Churned' } },
          { fields: { Email: 'new.person@example.com', Name: 'New Person' } },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.updatedRecords).toEqual([contactIds[0]]);
    expect(res.body.createdRecords).toHaveLength(1);
    expect(res.body.records).toHaveLength(2);
    expect(sim.state.listRecords(baseId, 'Contacts')).toHaveLength(before + 1);
    const updated = sim.state.getRecord(baseId, 'Contacts', contactIds[0]!)!;
    expect(updated.fields).toMatchObject({ Status: 'Churned', Name: existing.fields.Name });
  });

  it('PATCH keeps other fields, PUT clears them; links keep their inverse; deletes are batched', async () => {
    const sim = await start();
    const { baseId, contactIds, companyIds } = crm(sim);
    const id = contactIds[1]!;
    await call(sim, `/v0/${baseId}/Contacts/${id}`, {
      method: 'PATCH',
      body: { fields: { Company: [companyIds[5]] } },
    });
    expect(sim.state.getRecord(baseId, 'Companies', companyIds[5]!)!.fields.Contacts).toContain(id);
    expect(sim.state.getRecord(baseId, 'Companies', companyIds[1]!)!.fields.Contacts ?? []).not.toContain(id);

    const put = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'PUT',
      body: { records: [{ id, fields: { Name: 'Only Name' } }] },
    });
    expect(put.status).toBe(200);
    expect(Object.keys(put.body.records![0]!.fields).sort()).toEqual(['Created', 'Last Modified', 'Name']);
    expect(sim.state.getRecord(baseId, 'Companies', companyIds[5]!)!.fields.Contacts ?? []).not.toContain(id);

    const missing = await call(sim, `/v0/${baseId}/Contacts`, {
      method: 'PATCH',
      body: { records: [{ id: 'recDoesNotExist00', fields: { Name: 'x' } }] },
    });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: { type: 'ROW_DOES_NOT_EXIST' } });

    const q = new URLSearchParams();
    q.append('records[]', contactIds[2]!);
    q.append('records[]', contactIds[3]!);
    const del = await call(sim, `/v0/${baseId}/Contacts?${q}`, { method: 'DELETE' });
    expect(del.body).toEqual({
      records: [
        { id: contactIds[2], deleted: true },
        { id: contactIds[3], deleted: true },
      ],
    });
    expect((await call(sim, `/v0/${baseId}/Contacts/${contactIds[2]}`)).body).toEqual({ error: 'NOT_FOUND' });
  });
});

describe('metadata', () => {
  it('lists bases and tables with field ids, types and options', async () => {
    const sim = await start();
    const { baseId, tables } = crm(sim);
    const bases = await call(sim, '/v0/meta/bases');
    expect(bases.body.bases).toEqual([{ id: baseId, name: 'CRM', permissionLevel: 'create' }]);
    const meta = await call(sim, `/v0/meta/bases/${baseId}/tables`);
    type T = {
      id: string;
      name: string;
      primaryFieldId: string;
      fields: { id: string; name: string; type: string; options?: Record<string, unknown> }[];
    };
    const all = meta.body.tables as T[];
    expect(all.map((t) => t.name)).toEqual(['Companies', 'Contacts', 'Deals']);
    const contacts = all.find((t) => t.id === tables.contacts)!;
    expect(contacts.primaryFieldId).toBe(contacts.fields[0]!.id);
    const company = contacts.fields.find((f) => f.name === 'Company')!;
    expect(company.type).toBe('multipleRecordLinks');
    expect(company.options).toMatchObject({ linkedTableId: tables.companies, prefersSingleRecordLink: true });
    const inverse = all
      .find((t) => t.id === tables.companies)!
      .fields.find((f) => f.id === company.options!.inverseLinkFieldId);
    expect(inverse).toMatchObject({ name: 'Contacts', type: 'multipleRecordLinks' });
    expect(contacts.fields.find((f) => f.name === 'Status')!.options).toMatchObject({
      choices: [{ name: 'Lead' }, { name: 'Qualified' }, { name: 'Customer' }, { name: 'Churned' }],
    });
    const deals = all.find((t) => t.id === tables.deals)!;
    expect(deals.fields.map((f) => f.type)).toEqual(
      expect.arrayContaining([
        'currency',
        'percent',
        'checkbox',
        'multipleSelects',
        'date',
        'dateTime',
        'multipleAttachments',
        'autoNumber',
        'formula',
      ]),
    );
  });
});

describe('rate limits', () => {
  it('answers 429 without Retry-After after 5 requests in a second, and stays limited for 30 s', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, rateLimit: {} });
    const { baseId } = crm(sim);
    const other = sim.seed({ contacts: 1 });
    for (let i = 0; i < 5; i++)
      expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=1`)).status).toBe(200);
    const limited = await call(sim, `/v0/${baseId}/Contacts?pageSize=1`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      errors: [{ error: 'RATE_LIMIT_REACHED', message: 'Rate limit exceeded. Please try again later' }],
    });
    expect(limited.headers.get('retry-after')).toBeNull();

    // Another base is not affected: the limit is per base.
    expect((await call(sim, `/v0/${other.baseId}/Contacts?pageSize=1`)).status).toBe(200);

    clock.advance(1_000);
    expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=1`)).status).toBe(429);
    clock.advance(28_000);
    expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=1`)).status).toBe(429);
    clock.advance(1_000);
    expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=1`)).status).toBe(200);
  });

  it('allows 5 requests per second indefinitely', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, rateLimit: {} });
    const { baseId } = crm(sim);
    for (let second = 0; second < 3; second++) {
      for (let i = 0; i < 5; i++)
        expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=1`)).status).toBe(200);
      clock.advance(1_000);
    }
  });
});

describe('webhooks', () => {
  type Received = { headers: IncomingHttpHeaders; body: string };

  async function receiver(): Promise<{ url: string; received: Received[]; server: Server }> {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server };
  }

  it('creates a webhook, pings with a valid MAC, and lists payloads by cursor', async () => {
    const clock = new ManualClock('2026-04-01T12:00:00.000Z');
    const sim = await start({ clock });
    const { baseId, tables, contactIds } = crm(sim);
    const rx = await receiver();
    try {
      const created = await call(sim, `/v0/bases/${baseId}/webhooks`, {
        method: 'POST',
        body: {
          notificationUrl: rx.url,
          specification: {
            options: { filters: { dataTypes: ['tableData'], recordChangeScope: tables.contacts } },
          },
        },
      });
      expect(created.status).toBe(200);
      const hook = created.body as { id: string; macSecretBase64: string; expirationTime: string };
      expect(hook.id).toMatch(/^ach[A-Za-z0-9]{14}$/);
      expect(hook.expirationTime).toBe('2026-04-08T12:00:00.000Z');

      // A change through the API: one payload, one ping.
      const rec = await call(sim, `/v0/${baseId}/Contacts`, {
        method: 'POST',
        body: { fields: { Name: 'Webhook Wendy' } },
      });
      await sim.flushNotifications();
      expect(rx.received).toHaveLength(1);
      const ping = rx.received[0]!;
      expect(JSON.parse(ping.body)).toEqual({
        base: { id: baseId },
        webhook: { id: hook.id },
        timestamp: '2026-04-01T12:00:00.000Z',
      });
      const expectedMac = `hmac-sha256=${createHmac('sha256', Buffer.from(hook.macSecretBase64, 'base64')).update(ping.body).digest('hex')}`;
      expect(ping.headers['x-airtable-content-mac']).toBe(expectedMac);

      // Changes outside the scope (another table) make no payload.
      await call(sim, `/v0/${baseId}/Deals`, { method: 'POST', body: { fields: { Deal: 'Out of scope' } } });
      // An edit in Airtable's UI.
      sim.mutateRecord(baseId, 'Contacts', contactIds[0]!, { Status: 'Churned' });
      await sim.flushNotifications();
      expect(rx.received).toHaveLength(2);

      const first = await call(sim, `/v0/bases/${baseId}/webhooks/${hook.id}/payloads?limit=1`);
      expect(first.body).toMatchObject({ cursor: 2, mightHaveMore: true });
      const p1 = (first.body.payloads as Record<string, unknown>[])[0]!;
      expect(p1).toMatchObject({
        payloadFormat: 'v0',
        actionMetadata: { source: 'publicApi' },
        changedTablesById: {
          [tables.contacts]: {
            createdRecordsById: { [rec.body.id as string]: { createdTime: rec.body.createdTime } },
          },
        },
      });

      const second = await call(sim, `/v0/bases/${baseId}/webhooks/${hook.id}/payloads?cursor=2`);
      expect(second.body).toMatchObject({ cursor: 3, mightHaveMore: false });
      const p2 = (second.body.payloads as Record<string, unknown>[])[0]!;
      expect(p2).toMatchObject({ actionMetadata: { source: 'client' } });
      const changed = (
        p2.changedTablesById as Record<
          string,
          {
            changedRecordsById: Record<string, { current: { cellValuesByFieldId: Record<string, unknown> } }>;
          }
        >
      )[tables.contacts]!.changedRecordsById[contactIds[0]!]!;
      expect(Object.values(changed.current.cellValuesByFieldId)).toEqual(['Churned']);

      const empty = await call(sim, `/v0/bases/${baseId}/webhooks/${hook.id}/payloads?cursor=3`);
      expect(empty.body).toEqual({ cursor: 3, mightHaveMore: false, payloads: [] });

      const list = await call(sim, `/v0/bases/${baseId}/webhooks`);
      expect(list.body.webhooks).toMatchObject([
        { id: hook.id, cursorForNextPayload: 3, isHookEnabled: true, notificationUrl: rx.url },
      ]);
      expect(JSON.stringify(list.body)).not.toContain(hook.macSecretBase64);
    } finally {
      rx.server.close();
    }
  });

  it('expires after 7 days unless refreshed', async () => {
    const clock = new ManualClock('2026-04-01T00:00:00.000Z');
    const sim = await start({ clock });
    const { baseId } = crm(sim);
    const spec = { specification: { options: { filters: { dataTypes: ['tableData'] } } } };
    const a = (await call(sim, `/v0/bases/${baseId}/webhooks`, { method: 'POST', body: spec })).body
      .id as string;
    const b = (await call(sim, `/v0/bases/${baseId}/webhooks`, { method: 'POST', body: spec })).body
      .id as string;

    clock.advance(6 * 86_400_000);
    const refreshed = await call(sim, `/v0/bases/${baseId}/webhooks/${a}/refresh`, { method: 'POST' });
    expect(refreshed.body).toEqual({ expirationTime: '2026-04-14T00:00:00.000Z' });

    clock.advance(2 * 86_400_000);
    const list = await call(sim, `/v0/bases/${baseId}/webhooks`);
    expect((list.body.webhooks as { id: string }[]).map((w) => w.id)).toEqual([a]);
    expect((await call(sim, `/v0/bases/${baseId}/webhooks/${b}/refresh`, { method: 'POST' })).status).toBe(
      404,
    );
    expect((await call(sim, `/v0/bases/${baseId}/webhooks/${b}/payloads`)).status).toBe(404);
    expect((await call(sim, `/v0/bases/${baseId}/webhooks/${a}/payloads`)).status).toBe(200);
  });
});

describe('fault injection and request log', () => {
  it('returns injected 500s for the next requests, then recovers', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    sim.faults.next({ status: 500, count: 2 });
    expect((await call(sim, `/v0/${baseId}/Contacts`)).status).toBe(500);
    expect((await call(sim, `/v0/${baseId}/Contacts`)).status).toBe(500);
    expect((await call(sim, `/v0/${baseId}/Contacts`)).status).toBe(200);
  });

  it('drops the socket, hangs for a timeout, and injects the rate-limit answer', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    sim.faults.next({ kind: 'drop' });
    await expect(
      fetch(`${sim.url}/v0/${baseId}/Contacts`, { headers: { authorization: `Bearer ${sim.token}` } }),
    ).rejects.toThrow();

    sim.faults.next({ kind: 'timeout' });
    await expect(
      fetch(`${sim.url}/v0/${baseId}/Contacts`, {
        headers: { authorization: `Bearer ${sim.token}` },
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();

    sim.faults.next({ kind: 'rate_limit', path: `/v0/${baseId}/Contacts` });
    const limited = await call(sim, `/v0/${baseId}/Contacts`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      errors: [{ error: 'RATE_LIMIT_REACHED', message: 'Rate limit exceeded. Please try again later' }],
    });
  });

  it('counts requests per path', async () => {
    const sim = await start();
    const { baseId } = crm(sim);
    sim.requestLog.reset();
    await call(sim, `/v0/${baseId}/Contacts`);
    await call(sim, `/v0/${baseId}/Contacts`);
    await call(sim, `/v0/meta/bases/${baseId}/tables`);
    expect(sim.requestLog.total).toBe(3);
    expect(sim.requestLog.byPath()).toEqual({
      [`GET /v0/${baseId}/Contacts`]: 2,
      [`GET /v0/meta/bases/${baseId}/tables`]: 1,
    });
    expect(sim.requestLog.count({ path: '/v0/meta' })).toBe(1);
  });
});

describe('offsets and attachments as Airtable serves them', () => {
  it('expires an offset after 5 minutes without use (client inactivity), by default', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    const { baseId } = crm(sim);
    const first = await call(sim, `/v0/${baseId}/Contacts?pageSize=10`);
    let offset = first.body.offset as string;
    // Each page read keeps the iterator alive: 4 minutes between pages is fine, 8 minutes in all.
    for (let i = 0; i < 2; i++) {
      clock.advance(4 * 60_000);
      const next = await call(sim, `/v0/${baseId}/Contacts?pageSize=10&offset=${encodeURIComponent(offset)}`);
      expect(next.status).toBe(200);
      offset = next.body.offset as string;
    }
    clock.advance(5 * 60_000 + 1);
    const expired = await call(
      sim,
      `/v0/${baseId}/Contacts?pageSize=10&offset=${encodeURIComponent(offset)}`,
    );
    expect(expired.status).toBe(422);
    expect((expired.body.error as { type: string }).type).toBe('LIST_RECORDS_ITERATOR_NOT_AVAILABLE');
    // Restarting from the beginning works, as Airtable says.
    expect((await call(sim, `/v0/${baseId}/Contacts?pageSize=10`)).status).toBe(200);
    // The option still shortens it, or turns it off.
    const never = await start({ clock, iteratorTtlMs: false });
    const page = await call(never, `/v0/${crm(never).baseId}/Contacts?pageSize=10`);
    clock.advance(24 * 3600_000);
    const later = await call(
      never,
      `/v0/${crm(never).baseId}/Contacts?pageSize=10&offset=${encodeURIComponent(page.body.offset as string)}`,
    );
    expect(later.status).toBe(200);
  });

  it('serves attachments re-hosted behind signed URLs that expire, signed anew on later reads', async () => {
    const clock = new ManualClock('2026-01-15T09:20:00.000Z');
    const sim = await start({ clock });
    const { baseId, tables } = crm(sim);
    const written = 'https://files.example.com/contracts/acme.pdf';
    const created = await call(sim, `/v0/${baseId}/${tables.deals}`, {
      method: 'POST',
      body: { fields: { Contract: [{ url: written }] } },
    });
    expect(created.status).toBe(200);
    const [att] = created.body.fields!.Contract as { id: string; url: string; filename: string }[];
    expect(att?.filename).toBe('acme.pdf');
    const url = new URL(att!.url);
    expect(url.origin).toBe('https://v5.airtableusercontent.com');
    expect(att!.url).not.toContain('files.example.com');
    // Valid for at least 2 hours after the read: the expiry (ms) is part of the signed path.
    const expires = Number(url.pathname.split('/')[5]);
    expect(expires - clock.now()).toBeGreaterThanOrEqual(2 * 3600_000);
    expect(expires - clock.now()).toBeLessThanOrEqual(3 * 3600_000);
    // A read an hour later gets another URL for the same attachment; keeping it by id still works.
    clock.advance(3600_000);
    const again = await call(sim, `/v0/${baseId}/${tables.deals}/${created.body.id}`);
    const [later] = again.body.fields!.Contract as { id: string; url: string }[];
    expect(later?.id).toBe(att!.id);
    expect(later?.url).not.toBe(att!.url);
    expect(sim.state.attachmentSource(baseId, tables.deals, created.body.id as string, att!.id)).toBe(
      written,
    );
    const kept = await call(sim, `/v0/${baseId}/${tables.deals}/${created.body.id}`, {
      method: 'PATCH',
      body: { fields: { Contract: [{ id: att!.id }] } },
    });
    expect((kept.body.fields!.Contract as { id: string }[])[0]?.id).toBe(att!.id);
    // The old behaviour is an option.
    const original = await start({ clock, attachmentUrls: 'original' });
    const o = crm(original);
    const made = await call(original, `/v0/${o.baseId}/${o.tables.deals}`, {
      method: 'POST',
      body: { fields: { Contract: [{ url: written }] } },
    });
    expect((made.body.fields!.Contract as { url: string }[])[0]?.url).toBe(written);
  });
});
