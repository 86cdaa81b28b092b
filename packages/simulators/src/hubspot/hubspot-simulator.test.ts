import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { type HubSpotSimulator, type StartHubSpotSimulatorOptions, startHubSpotSimulator } from './index.ts';

type Obj = {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
};
type Json = Record<string, unknown> & {
  results?: Obj[];
  paging?: { next?: { after: string; link?: string } };
  total?: number;
  errors?: { category: string; message: string; context?: { ids?: string[] } }[];
  numErrors?: number;
  message?: string;
  category?: string;
  properties?: Record<string, string | null>;
  id?: string;
};

const started: HubSpotSimulator[] = [];

async function start(options: StartHubSpotSimulatorOptions = {}): Promise<HubSpotSimulator> {
  const sim = await startHubSpotSimulator({
    rateLimit: false,
    idSeed: 7,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()!.close();
});

async function call(
  sim: HubSpotSimulator,
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

const post = (sim: HubSpotSimulator, path: string, body: unknown) =>
  call(sim, path, { method: 'POST', body });

function manual(sim: HubSpotSimulator): ManualClock {
  return sim.clock as ManualClock;
}

describe('auth', () => {
  it('answers 401 INVALID_AUTHENTICATION without a token or with an unknown or revoked one', async () => {
    const sim = await start();
    for (const token of [null, 'pat-na1-nope']) {
      const r = await call(sim, '/crm/v3/objects/contacts', { token });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ status: 'error', category: 'INVALID_AUTHENTICATION' });
      expect(r.body.message).toMatch(/^Authentication credentials not found/);
      expect(typeof r.body.correlationId).toBe('string');
    }
    sim.revokeToken(sim.token);
    expect((await call(sim, '/crm/v3/objects/contacts')).status).toBe(401);
  });

  it('answers 403 MISSING_SCOPES naming the scope a token lacks', async () => {
    const sim = await start({ tokens: [{ token: 'pat-read-only', scopes: ['crm.objects.contacts.read'] }] });
    expect((await call(sim, '/crm/v3/objects/contacts', { token: 'pat-read-only' })).status).toBe(200);
    const r = await call(sim, '/crm/v3/objects/deals', { token: 'pat-read-only' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      status: 'error',
      category: 'MISSING_SCOPES',
      errors: [{ context: { requiredGranularScopes: ['crm.objects.deals.read'] } }],
    });
    const write = await call(sim, '/crm/v3/objects/contacts', {
      method: 'POST',
      token: 'pat-read-only',
      body: { properties: { email: 'x@example.com' } },
    });
    expect(write.status).toBe(403);
  });
});

describe('objects', () => {
  it('pages a list with limit <= 100 and paging.next.after until every contact is seen once', async () => {
    const sim = await start({ seed: { contacts: 130 } });
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const r = await call(sim, `/crm/v3/objects/contacts?limit=500${after ? `&after=${after}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.results!.length).toBeLessThanOrEqual(100);
      seen.push(...r.body.results!.map((o) => o.id));
      after = r.body.paging?.next?.after;
      pages++;
    } while (after);
    expect(pages).toBe(2);
    expect(seen).toHaveLength(130);
    expect(new Set(seen).size).toBe(130);
    expect(seen).toEqual([...sim.crm!.contacts].sort((a, b) => Number(a) - Number(b)));
  });

  it('returns string properties, default properties and ms-precision timestamps', async () => {
    const sim = await start();
    const id = sim.crm!.contacts[0]!;
    const r = await call(sim, `/crm/v3/objects/contacts/${id}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.properties!).sort()).toEqual([
      'createdate',
      'email',
      'firstname',
      'hs_object_id',
      'lastmodifieddate',
      'lastname',
    ]);
    expect(r.body.properties!.hs_object_id).toBe(id);
    expect(r.body.properties!.lastmodifieddate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(r.body).toMatchObject({ id, archived: false });

    const deal = await call(sim, `/crm/v3/objects/deals/${sim.crm!.deals[0]}?properties=amount,dealstage`);
    expect(deal.body.properties!.amount).toBe('5000');
    expect(deal.body.properties!.dealstage).toBe('appointmentscheduled');
  });

  it('creates, updates (only real changes move lastmodifieddate) and archives a contact', async () => {
    const sim = await start();
    const created = await post(sim, '/crm/v3/objects/contacts', {
      properties: { email: 'New.Person@Example.com', firstname: 'New', lifecyclestage: 'lead' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id!;
    expect(created.body.properties!.email).toBe('new.person@example.com');

    manual(sim).advance(1234);
    const same = await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { firstname: 'New' } },
    });
    expect(same.body.properties!.lastmodifieddate).toBe(created.body.properties!.lastmodifieddate);
    const changed = await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { firstname: 'Newer' } },
    });
    expect(Date.parse(changed.body.properties!.lastmodifieddate!)).toBe(manual(sim).now());

    const bad = await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { lifecyclestage: 'Lead', nope: 'x', createdate: '1' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.category).toBe('VALIDATION_ERROR');
    expect(bad.body.message).toMatch(/INVALID_OPTION/);
    expect(bad.body.message).toMatch(/PROPERTY_DOESNT_EXIST/);
    expect(bad.body.message).toMatch(/READ_ONLY_VALUE/);

    expect((await call(sim, `/crm/v3/objects/contacts/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(sim, `/crm/v3/objects/contacts/${id}`)).status).toBe(404);
    const archived = await call(sim, `/crm/v3/objects/contacts/${id}?archived=true`);
    expect(archived.body).toMatchObject({ id, archived: true });
  });

  it('refuses a second contact with the same email: 409 CONFLICT naming the existing id', async () => {
    const sim = await start();
    const first = await call(sim, `/crm/v3/objects/contacts/${sim.crm!.contacts[3]}`);
    const r = await post(sim, '/crm/v3/objects/contacts', {
      properties: { email: first.body.properties!.email!.toUpperCase() },
    });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      status: 'error',
      category: 'CONFLICT',
      message: `Contact already exists. Existing ID: ${first.body.id}`,
    });
  });
});

describe('batch', () => {
  it('refuses more than 100 inputs with a 400', async () => {
    const sim = await start();
    const inputs = Array.from({ length: 101 }, (_, i) => ({ properties: { email: `b${i}@example.com` } }));
    const r = await post(sim, '/crm/v3/objects/contacts/batch/create', { inputs });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    expect(r.body.message).toMatch(/100/);
    const ok = await post(sim, '/crm/v3/objects/contacts/batch/create', { inputs: inputs.slice(0, 100) });
    expect(ok.status).toBe(201);
    expect((ok.body.results as Obj[]).length).toBe(100);
  });

  it('answers 207 with errors[] and numErrors when some ids do not exist', async () => {
    const sim = await start();
    const [a, b] = sim.crm!.contacts;
    const read = await post(sim, '/crm/v3/objects/contacts/batch/read', {
      inputs: [{ id: a }, { id: '1' }, { id: b }],
      properties: ['email'],
      propertiesWithHistory: [],
    });
    expect(read.status).toBe(207);
    expect(read.body.numErrors).toBe(1);
    expect(read.body.errors![0]).toMatchObject({ category: 'OBJECT_NOT_FOUND', context: { ids: ['1'] } });
    expect(read.body.results!.map((o) => o.id).sort()).toEqual([a, b].sort());

    const update = await post(sim, '/crm/v3/objects/contacts/batch/update', {
      inputs: [
        { id: a, properties: { jobtitle: 'Chief' } },
        { id: '2', properties: { jobtitle: 'Ghost' } },
      ],
    });
    expect(update.status).toBe(207);
    expect(update.body.results).toHaveLength(1);
    expect(
      (await call(sim, `/crm/v3/objects/contacts/${a}?properties=jobtitle`)).body.properties!.jobtitle,
    ).toBe('Chief');
  });

  it('upserts by email, telling new from existing', async () => {
    const sim = await start();
    const existing = await call(sim, `/crm/v3/objects/contacts/${sim.crm!.contacts[0]}`);
    const r = await post(sim, '/crm/v3/objects/contacts/batch/upsert', {
      inputs: [
        { id: existing.body.properties!.email, idProperty: 'email', properties: { jobtitle: 'Updated' } },
        { id: 'fresh@example.com', idProperty: 'email', properties: { firstname: 'Fresh' } },
      ],
    });
    expect(r.status).toBe(200);
    const results = r.body.results as (Obj & { new: boolean })[];
    expect(results.find((x) => x.id === existing.body.id)?.new).toBe(false);
    expect(results.find((x) => x.properties.email === 'fresh@example.com')?.new).toBe(true);
  });
});

describe('search', () => {
  it('filters, sorts and pages with a total', async () => {
    const sim = await start();
    const r = await post(sim, '/crm/v3/objects/contacts/search', {
      filterGroups: [{ filters: [{ propertyName: 'lifecyclestage', operator: 'EQ', value: 'customer' }] }],
      sorts: [{ propertyName: 'lastmodifieddate', direction: 'DESCENDING' }],
      properties: ['email', 'lifecyclestage'],
      limit: 3,
    });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(8);
    expect(r.body.results).toHaveLength(3);
    expect(r.body.results!.every((o) => o.properties.lifecyclestage === 'customer')).toBe(true);
    const times = r.body.results!.map((o) => Date.parse(o.properties.lastmodifieddate!));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(r.body.paging?.next?.after).toBe('3');

    const has = await post(sim, '/crm/v3/objects/deals/search', {
      filterGroups: [
        { filters: [{ propertyName: 'amount', operator: 'GTE', value: '20000' }] },
        { filters: [{ propertyName: 'dealstage', operator: 'EQ', value: 'closedwon' }] },
      ],
      limit: 100,
    });
    expect(has.body.total).toBe(5);
    const big = await post(sim, '/crm/v3/objects/contacts/search', { limit: 201 });
    expect(big.status).toBe(400);
  });

  it('stops at 10,000 results: paging offers after=10000 and asking for it is a 400', async () => {
    const sim = await start({ seed: false });
    // Created "in HubSpot" to keep the test fast; search sees them once the index catches up.
    for (let i = 0; i < 10_100; i++) sim.create('deals', { dealname: `D${i}` });
    manual(sim).advance(60_000);
    const last = await post(sim, '/crm/v3/objects/deals/search', { limit: 200, after: '9800' });
    expect(last.status).toBe(200);
    expect(last.body.total).toBe(10_100);
    expect(last.body.paging?.next?.after).toBe('10000');
    // A page that would cross the cap ends at it: no query gives more than 10,000 results.
    const crossing = await post(sim, '/crm/v3/objects/deals/search', { limit: 200, after: '9900' });
    expect(crossing.body.results).toHaveLength(100);
    expect(crossing.body.paging?.next?.after).toBe('10000');
    const beyond = await post(sim, '/crm/v3/objects/deals/search', { limit: 200, after: '10000' });
    expect(beyond.status).toBe(400);
    expect(beyond.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
  });

  it('tells the account (portal) of the token: GET /account-info/v3/details', async () => {
    const sim = await start({ portalId: 4242 });
    const res = await call(sim, '/account-info/v3/details');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ portalId: 4242, uiDomain: 'app.hubspot.com' });
    expect((await call(sim, '/account-info/v3/details', { token: 'nope' })).status).toBe(401);
  });

  it('lags writes by searchLagMs: new objects and new values show only afterwards', async () => {
    const sim = await start({ searchLagMs: 2000 });
    const byEmail = (email: string) =>
      post(sim, '/crm/v3/objects/contacts/search', {
        filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: email }] }],
        properties: ['email', 'jobtitle'],
      });
    const created = await post(sim, '/crm/v3/objects/contacts', {
      properties: { email: 'lag@example.com', jobtitle: 'A' },
    });
    expect((await byEmail('lag@example.com')).body.total).toBe(0);
    manual(sim).advance(2000);
    const visible = await byEmail('lag@example.com');
    expect(visible.body.total).toBe(1);
    expect(visible.body.results![0]!.properties.jobtitle).toBe('A');

    await call(sim, `/crm/v3/objects/contacts/${created.body.id}`, {
      method: 'PATCH',
      body: { properties: { jobtitle: 'B' } },
    });
    manual(sim).advance(1999);
    expect((await byEmail('lag@example.com')).body.results![0]!.properties.jobtitle).toBe('A');
    manual(sim).advance(1);
    expect((await byEmail('lag@example.com')).body.results![0]!.properties.jobtitle).toBe('B');
  });
});

describe('rate limits', () => {
  it('sends X-HubSpot-RateLimit-* headers and a 429 with HubSpot body past the 10-second window', async () => {
    const sim = await start({ rateLimit: { perTenSeconds: 3, daily: 1000 } });
    const first = await call(sim, '/crm/v3/objects/contacts');
    expect(first.headers.get('x-hubspot-ratelimit-max')).toBe('3');
    expect(first.headers.get('x-hubspot-ratelimit-remaining')).toBe('2');
    expect(first.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('10000');
    expect(first.headers.get('x-hubspot-ratelimit-daily')).toBe('1000');
    expect(first.headers.get('x-hubspot-ratelimit-daily-remaining')).toBe('999');
    await call(sim, '/crm/v3/objects/contacts');
    await call(sim, '/crm/v3/objects/contacts');
    const refused = await call(sim, '/crm/v3/objects/contacts');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      status: 'error',
      message: 'You have reached your ten_secondly_rolling limit.',
      errorType: 'RATE_LIMIT',
      policyName: 'TEN_SECONDLY_ROLLING',
    });
    expect(refused.headers.get('x-hubspot-ratelimit-remaining')).toBe('0');
    manual(sim).advance(10_000);
    expect((await call(sim, '/crm/v3/objects/contacts')).status).toBe(200);
  });

  it('refuses past the daily allowance with the DAILY policy until the next day', async () => {
    const sim = await start({ rateLimit: { daily: 2 } });
    await call(sim, '/crm/v3/objects/contacts');
    const second = await call(sim, '/crm/v3/objects/contacts');
    expect(second.headers.get('x-hubspot-ratelimit-daily-remaining')).toBe('0');
    const refused = await call(sim, '/crm/v3/objects/contacts');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      message: 'You have reached your daily limit.',
      policyName: 'DAILY',
    });
    manual(sim).advance(24 * 3600 * 1000);
    expect((await call(sim, '/crm/v3/objects/contacts')).status).toBe(200);
  });

  it('limits search to 5 requests per second with the secondly message', async () => {
    const sim = await start({ rateLimit: {} });
    for (let i = 0; i < 5; i++)
      expect((await post(sim, '/crm/v3/objects/contacts/search', {})).status).toBe(200);
    const refused = await post(sim, '/crm/v3/objects/contacts/search', {});
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      message: 'You have reached your secondly limit.',
      policyName: 'SECONDLY',
    });
    expect((await call(sim, '/crm/v3/objects/contacts')).status).toBe(200);
    manual(sim).advance(1000);
    expect((await post(sim, '/crm/v3/objects/contacts/search', {})).status).toBe(200);
  });
});

describe('associations and merges', () => {
  it('associates with v4 default and reads associations on GET', async () => {
    const sim = await start();
    const contact = sim.crm!.contacts[0]!;
    const company = sim.crm!.companies[5]!;
    const put = await call(
      sim,
      `/crm/v4/objects/contacts/${contact}/associations/default/companies/${company}`,
      {
        method: 'PUT',
      },
    );
    expect(put.status).toBe(200);
    const r = await call(sim, `/crm/v3/objects/contacts/${contact}?associations=companies`);
    const ids = (r.body.associations as { companies: { results: { id: string }[] } }).companies.results.map(
      (x) => x.id,
    );
    expect(ids).toContain(company);
    expect(ids).toContain(sim.crm!.companies[0]);
  });

  it('creates a deal with associations given in the create body', async () => {
    const sim = await start();
    const company = sim.crm!.companies[2]!;
    const contact = sim.crm!.contacts[2]!;
    const r = await post(sim, '/crm/v3/objects/deals', {
      properties: { dealname: 'Linked', dealstage: 'qualifiedtobuy', pipeline: 'default' },
      associations: [
        { to: { id: company }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 5 }] },
        { to: { id: contact }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 3 }] },
      ],
    });
    expect(r.status).toBe(201);
    const read = await call(sim, `/crm/v3/objects/deals/${r.body.id}?associations=companies,contacts`);
    const assoc = read.body.associations as Record<string, { results: { id: string; type: string }[] }>;
    expect(assoc.companies!.results).toContainEqual({ id: company, type: 'deal_to_company' });
    expect(assoc.contacts!.results).toEqual([{ id: contact, type: 'deal_to_contact' }]);
    const fromCompany = await call(sim, `/crm/v4/objects/companies/${company}/associations/deals`);
    expect(
      (fromCompany.body.results as unknown as { toObjectId: number }[]).map((x) => String(x.toObjectId)),
    ).toContain(r.body.id);
    const missing = await post(sim, '/crm/v3/objects/deals', {
      properties: { dealname: 'Dangling' },
      associations: [
        { to: { id: '1' }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 5 }] },
      ],
    });
    expect(missing.status).toBe(400);
  });

  it('v4 batch read: every input id with its associated ids and types, ids with none in a 207 error, at most 1,000 inputs', async () => {
    const sim = await start();
    const [c0, c1] = sim.crm!.contacts as [string, string];
    const company = sim.crm!.companies[0]!;
    const lonely = sim.create('contacts', { email: 'lonely@example.com' }).id;
    const r = await post(sim, '/crm/v4/associations/contacts/companies/batch/read', {
      inputs: [{ id: c0 }, { id: c1 }, { id: lonely }],
    });
    expect(r.status).toBe(207);
    const results = r.body.results as unknown as {
      from: { id: string };
      to: {
        toObjectId: string;
        associationTypes: { category: string; typeId: number; label: string | null }[];
      }[];
    }[];
    expect(results.map((x) => x.from.id)).toEqual([c0, c1]);
    // The seed makes each contact's company its primary one: both types come back, primary labelled.
    expect(results[0]!.to).toEqual([
      {
        toObjectId: company,
        associationTypes: [
          { category: 'HUBSPOT_DEFINED', typeId: 1, label: 'Primary' },
          { category: 'HUBSPOT_DEFINED', typeId: 279, label: null },
        ],
      },
    ]);
    expect(r.body.errors).toEqual([
      expect.objectContaining({ category: 'OBJECT_NOT_FOUND', context: { ids: [lonely] } }),
    ]);
    const tooMany = await post(sim, '/crm/v4/associations/contacts/companies/batch/read', {
      inputs: Array.from({ length: 1001 }, (_, i) => ({ id: String(i + 1) })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.category).toBe('VALIDATION_ERROR');
  });

  it('v4 batch read pages a record with more than 500 associations through per-input after', async () => {
    const sim = await start({ seed: false });
    const company = sim.create('companies', { name: 'Big' }).id;
    const contacts = Array.from(
      { length: 501 },
      (_, i) => sim.create('contacts', { email: `p${i}@big.com` }).id,
    );
    for (const c of contacts) sim.associate('companies', company, 'contacts', c);
    const first = await post(sim, '/crm/v4/associations/companies/contacts/batch/read', {
      inputs: [{ id: company }],
    });
    const page = (
      first.body.results as unknown as { to: unknown[]; paging?: { next: { after: string } } }[]
    )[0]!;
    expect(page.to).toHaveLength(500);
    const second = await post(sim, '/crm/v4/associations/companies/contacts/batch/read', {
      inputs: [{ id: company, after: page.paging!.next.after }],
    });
    const rest = (second.body.results as unknown as { to: { toObjectId: string }[]; paging?: unknown }[])[0]!;
    expect(rest.to.map((x) => x.toObjectId)).toEqual([contacts[500]]);
    expect(rest.paging).toBeUndefined();
  });

  it('v4 batch associate/default, create (labelled) and archive: pairs made and removed, a missing record fails alone', async () => {
    const sim = await start();
    const contact = sim.crm!.contacts[3]!;
    const [, other, third] = sim.crm!.companies as [string, string, string];
    const made = await post(sim, '/crm/v4/associations/contacts/companies/batch/associate/default', {
      inputs: [
        { from: { id: contact }, to: { id: other } },
        { from: { id: contact }, to: { id: '999' } },
      ],
    });
    expect(made.status).toBe(207);
    expect(made.body.results).toEqual([
      {
        from: { id: contact },
        to: { id: other },
        associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 279 },
      },
      {
        from: { id: other },
        to: { id: contact },
        associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 280 },
      },
    ]);
    expect(made.body.errors).toEqual([
      expect.objectContaining({ category: 'OBJECT_NOT_FOUND', context: { ids: ['999'] } }),
    ]);
    // Seen from the other side as well: associations are two-way.
    expect(sim.state.associated('companies', other, 'contacts').map((a) => a.id)).toContain(contact);

    const labelled = await post(sim, '/crm/v4/associations/contacts/companies/batch/create', {
      inputs: [
        {
          from: { id: contact },
          to: { id: third },
          types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 279 }],
        },
      ],
    });
    expect(labelled.status).toBe(201);
    expect((labelled.body.results as unknown as { toObjectId: string }[])[0]?.toObjectId).toBe(third);

    const gone = await post(sim, '/crm/v4/associations/contacts/companies/batch/archive', {
      inputs: [{ from: { id: contact }, to: [{ id: other }, { id: third }] }],
    });
    expect(gone.status).toBe(204);
    expect(sim.state.associated('contacts', contact, 'companies').map((a) => a.id)).toEqual([
      sim.crm!.companies[3],
    ]);
    expect(sim.state.associated('companies', other, 'contacts').map((a) => a.id)).not.toContain(contact);
  });

  it("an association change leaves both records' last-modified time alone", async () => {
    const sim = await start();
    const contact = sim.crm!.contacts[0]!;
    const company = sim.crm!.companies[4]!;
    const before = [
      sim.state.get('contacts', contact)!.updatedAt,
      sim.state.get('companies', company)!.updatedAt,
    ];
    manual(sim).advance(5_000);
    await post(sim, '/crm/v4/associations/contacts/companies/batch/associate/default', {
      inputs: [{ from: { id: contact }, to: { id: company } }],
    });
    expect([
      sim.state.get('contacts', contact)!.updatedAt,
      sim.state.get('companies', company)!.updatedAt,
    ]).toEqual(before);
  });

  it('merges two contacts into a new id; the old ids resolve to it and leave lists', async () => {
    const sim = await start();
    const [a, b] = sim.crm!.contacts as [string, string];
    const r = await post(sim, '/crm/v3/objects/contacts/merge', { primaryObjectId: a, objectIdToMerge: b });
    expect(r.status).toBe(200);
    const merged = r.body.id!;
    expect([a, b]).not.toContain(merged);
    expect(r.body.properties!.hs_merged_object_ids).toBe(`${a};${b}`);
    expect((await call(sim, `/crm/v3/objects/contacts/${a}`)).body.id).toBe(merged);
    const list = await call(sim, '/crm/v3/objects/contacts?limit=100');
    const ids = list.body.results!.map((o) => o.id);
    expect(ids).toContain(merged);
    expect(ids).not.toContain(a);
    expect(ids).not.toContain(b);
  });
});

describe('properties', () => {
  it('lists defaults with enumeration options and creates custom properties', async () => {
    const sim = await start();
    const r = await call(sim, '/crm/v3/properties/contacts');
    const results = r.body.results as unknown as {
      name: string;
      type: string;
      options: { value: string }[];
    }[];
    const stage = results.find((p) => p.name === 'lifecyclestage');
    expect(stage?.type).toBe('enumeration');
    expect(stage?.options.map((o) => o.value)).toContain('marketingqualifiedlead');
    const created = await post(sim, '/crm/v3/properties/contacts', {
      name: 'lockstep_tier',
      label: 'Tier',
      type: 'enumeration',
      fieldType: 'select',
      groupName: 'contactinformation',
      options: [
        { label: 'Gold', value: 'gold', hidden: false },
        { label: 'Silver', value: 'silver', hidden: false },
      ],
    });
    expect(created.status).toBe(201);
    const again = await post(sim, '/crm/v3/properties/contacts', {
      ...created.body,
      options: [{ label: 'A', value: 'a' }],
    });
    expect(again.status).toBe(409);
    const id = sim.crm!.contacts[0];
    const ok = await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { lockstep_tier: 'gold' } },
    });
    expect(ok.body.properties!.lockstep_tier).toBe('gold');
    const bad = await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { lockstep_tier: 'bronze' } },
    });
    expect(bad.status).toBe(400);
  });
});

describe('webhooks', () => {
  let receiver: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    receiver = undefined;
  });

  async function listen(): Promise<{ url: string; got: { headers: IncomingHttpHeaders; body: string }[] }> {
    const got: { headers: IncomingHttpHeaders; body: string }[] = [];
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hubspot/webhook`, got };
  }

  it('POSTs a batch of events signed with X-HubSpot-Signature-v3 that verifies per the documented algorithm', async () => {
    const target = await listen();
    const secret = 'app-client-secret-0000';
    const sim = await start({ webhooks: { targetUrl: target.url, clientSecret: secret, appId: 4242 } });
    const id = sim.crm!.contacts[0]!;
    await call(sim, `/crm/v3/objects/contacts/${id}`, {
      method: 'PATCH',
      body: { properties: { firstname: 'Zed', jobtitle: 'CFO' } },
    });
    await sim.flushWebhooks();

    expect(target.got).toHaveLength(1);
    const { headers, body } = target.got[0]!;
    const events = JSON.parse(body) as Record<string, unknown>[];
    expect(events.map((e) => e.propertyName).sort()).toEqual(['firstname', 'jobtitle']);
    expect(events[0]).toMatchObject({
      subscriptionType: 'contact.propertyChange',
      objectId: Number(id),
      changeSource: 'INTEGRATION',
      portalId: sim.state.portalId,
      appId: 4242,
      attemptNumber: 0,
      occurredAt: sim.clock.now(),
    });
    expect(typeof events[0]!.eventId).toBe('number');
    expect(typeof events[0]!.subscriptionId).toBe('number');

    // Verify independently: base64(HMAC-SHA256(secret, method + uri + body + timestamp)).
    const timestamp = String(headers['x-hubspot-request-timestamp']);
    expect(Number(timestamp)).toBe(sim.clock.now());
    const expected = createHmac('sha256', secret).update(`POST${target.url}${body}${timestamp}`).digest();
    const signature = Buffer.from(String(headers['x-hubspot-signature-v3']), 'base64');
    expect(signature.length).toBe(expected.length);
    expect(timingSafeEqual(signature, expected)).toBe(true);
    const forged = createHmac('sha256', 'wrong-secret')
      .update(`POST${target.url}${body}${timestamp}`)
      .digest();
    expect(timingSafeEqual(signature, forged)).toBe(false);
  });

  it('reports creation, deletion and merge events for edits made in HubSpot (CRM_UI)', async () => {
    const target = await listen();
    const sim = await start({
      webhooks: {
        targetUrl: target.url,
        clientSecret: 's',
        subscriptions: ['contact.creation', 'contact.deletion', 'contact.merge'],
      },
    });
    const c = sim.create('contacts', { email: 'ui@example.com' });
    sim.archive('contacts', c.id);
    const [a, b] = sim.crm!.contacts as [string, string];
    const merged = sim.merge('contacts', a, b);
    await sim.flushWebhooks();
    const events = target.got.flatMap((g) => JSON.parse(g.body) as Record<string, unknown>[]);
    expect(events.map((e) => e.subscriptionType)).toEqual([
      'contact.creation',
      'contact.deletion',
      'contact.merge',
    ]);
    expect(events[0]).toMatchObject({
      objectId: Number(c.id),
      changeSource: 'CRM_UI',
      changeFlag: 'CREATED',
    });
    expect(events[2]).toMatchObject({
      primaryObjectId: Number(a),
      mergedObjectIds: [Number(b)],
      newObjectId: Number(merged.id),
    });
  });
});

describe('faults', () => {
  it('applies injected faults and logs requests', async () => {
    const sim = await start();
    sim.faults.next({ status: 502, count: 1, path: '/crm/v3/objects/deals' });
    sim.faults.next({ kind: 'rate_limit', path: '/crm/v3/objects/companies' });
    expect((await call(sim, '/crm/v3/objects/deals')).status).toBe(502);
    const limited = await call(sim, '/crm/v3/objects/companies');
    expect(limited.status).toBe(429);
    expect(limited.body.policyName).toBe('TEN_SECONDLY_ROLLING');
    expect((await call(sim, '/crm/v3/objects/deals')).status).toBe(200);
    expect(sim.requestLog.count({ path: '/crm/v3/objects/deals' })).toBe(2);
  });
});

describe('oauth', () => {
  const app = {
    clientId: 'app-client-id',
    clientSecret: 'app-client-secret',
    redirectUris: ['http://localhost:4000/callback'],
    appId: 777,
  };
  const scopes = 'oauth crm.objects.contacts.read crm.objects.contacts.write';

  /** Goes through the install page and answers the code it redirected with. */
  async function install(
    sim: HubSpotSimulator,
    extra: Record<string, string> = {},
  ): Promise<{ code: string; state: string | null }> {
    const url = new URL(`${sim.url}/oauth/authorize`);
    url.searchParams.set('client_id', app.clientId);
    url.searchParams.set('redirect_uri', app.redirectUris[0] as string);
    url.searchParams.set('scope', scopes);
    url.searchParams.set('state', 'st-1');
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(app.redirectUris[0]);
    return { code: back.searchParams.get('code') as string, state: back.searchParams.get('state') };
  }

  async function token(sim: HubSpotSimulator, form: Record<string, string>) {
    const res = await fetch(`${sim.url}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const codeGrant = (code: string, more: Record<string, string> = {}) => ({
    grant_type: 'authorization_code',
    client_id: app.clientId,
    client_secret: app.clientSecret,
    redirect_uri: app.redirectUris[0] as string,
    code,
    ...more,
  });

  it('exchanges an install code once for tokens that expire after 1800 s with EXPIRED_AUTHENTICATION', async () => {
    const sim = await start({ oauthApps: [app] });
    const { code, state } = await install(sim);
    expect(state).toBe('st-1');
    const first = await token(sim, codeGrant(code));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'bearer', expires_in: 1800, hub_id: sim.state.portalId });
    expect(typeof first.body.access_token).toBe('string');
    expect(first.body.refresh_token).toMatch(/^na1-/);
    const accessToken = first.body.access_token as string;

    // The granted scopes apply: contacts yes, deals no.
    expect((await call(sim, '/crm/v3/objects/contacts?limit=1', { token: accessToken })).status).toBe(200);
    const deals = await call(sim, '/crm/v3/objects/deals?limit=1', { token: accessToken });
    expect(deals.status).toBe(403);
    expect(deals.body.category).toBe('MISSING_SCOPES');

    // A code is good once.
    const again = await token(sim, codeGrant(code));
    expect(again.status).toBe(400);
    expect(again.body.status).toBe('BAD_AUTH_CODE');

    (sim.clock as ManualClock).advance(1800 * 1000);
    const expired = await call(sim, '/crm/v3/objects/contacts?limit=1', { token: accessToken });
    expect(expired.status).toBe(401);
    expect(expired.body.category).toBe('EXPIRED_AUTHENTICATION');
  });

  it('refreshes with the same (non-rotating) refresh token; a wrong secret or token is refused', async () => {
    const sim = await start({ oauthApps: [app] });
    const { code } = await install(sim);
    const first = await token(sim, codeGrant(code));
    const refreshToken = first.body.refresh_token as string;
    (sim.clock as ManualClock).advance(1801 * 1000);
    const refreshed = await token(sim, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      refresh_token: refreshToken,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBe(refreshToken);
    expect(refreshed.body.access_token).not.toBe(first.body.access_token);
    const token2 = refreshed.body.access_token as string;
    expect((await call(sim, '/crm/v3/objects/contacts?limit=1', { token: token2 })).status).toBe(200);
    // The refresh token keeps working.
    const third = await token(sim, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      refresh_token: refreshToken,
    });
    expect(third.status).toBe(200);

    const badSecret = await token(sim, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: 'nope',
      refresh_token: refreshToken,
    });
    expect(badSecret.body.status).toBe('BAD_CLIENT_SECRET');
    const badToken = await token(sim, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      refresh_token: 'na1-unknown',
    });
    expect(badToken.status).toBe(400);
    expect(badToken.body).toMatchObject({
      status: 'BAD_REFRESH_TOKEN',
      message: 'missing or invalid refresh token',
    });

    // Uninstalled: the refresh token stops working.
    const del = await fetch(`${sim.url}/oauth/v1/refresh-tokens/${refreshToken}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    const gone = await token(sim, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      refresh_token: refreshToken,
    });
    expect(gone.body.status).toBe('BAD_REFRESH_TOKEN');
  });

  it('checks PKCE: a code issued with an S256 challenge needs the matching code_verifier', async () => {
    const sim = await start({ oauthApps: [app] });
    const verifier = 'a-verifier-of-at-least-forty-three-characters-0123456789';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { code } = await install(sim, { code_challenge: challenge, code_challenge_method: 'S256' });
    const missing = await token(sim, codeGrant(code));
    expect(missing.status).toBe(400);
    expect(missing.body.status).toBe('BAD_CODE_VERIFIER');
    const wrong = await token(sim, codeGrant(code, { code_verifier: `${verifier}x` }));
    expect(wrong.body.status).toBe('BAD_CODE_VERIFIER');
    const right = await token(sim, codeGrant(code, { code_verifier: verifier }));
    expect(right.status).toBe(200);
  });

  it('refuses an unknown client, a foreign redirect_uri or an unknown scope on the install page', async () => {
    const sim = await start({ oauthApps: [app] });
    const url = (params: Record<string, string>) => {
      const u = new URL(`${sim.url}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        client_id: app.clientId,
        redirect_uri: app.redirectUris[0] as string,
        scope: scopes,
        ...params,
      }))
        u.searchParams.set(k, v);
      return u;
    };
    const bads: Record<string, string>[] = [
      { client_id: 'other' },
      { redirect_uri: 'http://evil.test/cb' },
      { scope: 'oauth tickets.bogus' },
    ];
    for (const bad of bads) {
      const res = await fetch(url(bad), { redirect: 'manual' });
      expect(res.status).toBe(400);
    }
    // An unknown optional scope is left out rather than refused.
    const ok = await fetch(url({ optional_scope: 'crm.objects.deals.read not.a.scope' }), {
      redirect: 'manual',
    });
    expect(ok.status).toBe(302);
    const code = new URL(ok.headers.get('location') as string).searchParams.get('code') as string;
    const t = await token(sim, codeGrant(code));
    expect(t.body.scopes).toEqual([...scopes.split(' '), 'crm.objects.deals.read']);
    // The redirect_uri of the token request must be the one the code was issued for.
    const { code: code2 } = await install(sim);
    const mismatch = await token(sim, codeGrant(code2, { redirect_uri: 'http://localhost:4000/other' }));
    expect(mismatch.body.status).toBe('BAD_REDIRECT_URI');
  });

  it('describes an access token: GET /oauth/v1/access-tokens/{token}', async () => {
    const sim = await start({ oauthApps: [app] });
    const { code } = await install(sim);
    const t = await token(sim, codeGrant(code));
    const accessToken = t.body.access_token as string;
    (sim.clock as ManualClock).advance(600 * 1000);
    const res = await fetch(`${sim.url}/oauth/v1/access-tokens/${accessToken}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      token: accessToken,
      hub_id: sim.state.portalId,
      app_id: 777,
      scopes: scopes.split(' '),
      expires_in: 1200,
      token_type: 'access',
      user: expect.stringContaining('@'),
    });
    expect((await fetch(`${sim.url}/oauth/v1/access-tokens/unknown`)).status).toBe(404);
  });
});
