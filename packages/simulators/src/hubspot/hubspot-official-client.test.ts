/**
 * Contract test: HubSpot's official Node client (@hubspot/api-client) against the simulator.
 * If the client cannot use the simulator, the simulator is wrong, not this test.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Signature } from '@hubspot/api-client';
import {
  AssociationSpecAssociationCategoryEnum,
  BatchResponseLabelsBetweenObjectPair,
  BatchResponsePublicAssociationMultiWithLabelWithErrors,
  BatchResponsePublicDefaultAssociation,
  PublicAssociationMultiWithLabel,
} from '@hubspot/api-client/lib/codegen/crm/associations/v4';
import {
  BatchResponseSimplePublicObject,
  BatchResponseSimplePublicObjectWithErrors,
  CollectionResponseSimplePublicObjectWithAssociationsForwardPaging,
  CollectionResponseWithTotalSimplePublicObjectForwardPaging,
  FilterOperatorEnum,
  SimplePublicObject,
  SimplePublicObjectWithAssociations,
} from '@hubspot/api-client/lib/codegen/crm/contacts';
import { CollectionResponsePropertyNoPaging, Property } from '@hubspot/api-client/lib/codegen/crm/properties';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { type HubSpotSimulator, type StartHubSpotSimulatorOptions, startHubSpotSimulator } from './index.ts';

const started: HubSpotSimulator[] = [];

async function start(
  options: StartHubSpotSimulatorOptions = {},
): Promise<{ sim: HubSpotSimulator; client: Client }> {
  const sim = await startHubSpotSimulator({
    rateLimit: false,
    idSeed: 11,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  // No retries: a 429 must reach the caller as the client's own error.
  const client = new Client({ accessToken: sim.token, basePath: sim.url, numberOfApiCallRetries: 0 });
  return { sim, client };
}

afterEach(async () => {
  while (started.length) await started.pop()!.close();
});

/** The client's ApiException carries the HTTP status as `code`. */
async function failure(p: Promise<unknown>): Promise<{ code: number; body: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; body: unknown };
  }
  throw new Error('expected the call to fail');
}

describe('@hubspot/api-client against the simulator', () => {
  it('basicApi: getPage pages, getById reads associations, create/update/archive round-trip', async () => {
    const { sim, client } = await start();
    const contacts = client.crm.contacts.basicApi;

    const first = await contacts.getPage(20, undefined, ['email', 'lifecyclestage']);
    expect(first).toBeInstanceOf(CollectionResponseSimplePublicObjectWithAssociationsForwardPaging);
    expect(first.results).toHaveLength(20);
    const one = first.results[0]!;
    expect(one).toBeInstanceOf(SimplePublicObjectWithAssociations);
    expect(one.createdAt).toBeInstanceOf(Date);
    expect(one.updatedAt.getTime()).toBeGreaterThanOrEqual(one.createdAt.getTime());
    expect(one.properties.email).toMatch(/@/);
    const after = first.paging?.next?.after;
    expect(after).toBeDefined();
    const rest = await contacts.getPage(100, after);
    expect(rest.results).toHaveLength(30);
    expect(rest.paging).toBeUndefined();

    const withCompany = await contacts.getById(sim.crm!.contacts[0]!, ['email'], undefined, ['companies']);
    expect(withCompany.associations?.companies?.results.map((r) => r.id)).toContain(sim.crm!.companies[0]);

    const created = await contacts.create({
      properties: { email: 'client@example.com', firstname: 'Client', lifecyclestage: 'lead' },
      associations: [],
    });
    expect(created).toBeInstanceOf(SimplePublicObject);
    expect(created.properties.email).toBe('client@example.com');
    expect(created.properties.hs_object_id).toBe(created.id);

    (sim.clock as ManualClock).advance(5000);
    const updated = await contacts.update(created.id, { properties: { lastname: 'Official' } });
    expect(updated.properties.lastname).toBe('Official');
    expect(updated.updatedAt.getTime() - created.updatedAt.getTime()).toBe(5000);

    const dupe = await failure(
      contacts.create({ properties: { email: 'client@example.com' }, associations: [] }),
    );
    expect(dupe.code).toBe(409);
    expect((dupe.body as { message: string }).message).toBe(
      `Contact already exists. Existing ID: ${created.id}`,
    );

    await contacts.archive(created.id);
    expect((await failure(contacts.getById(created.id))).code).toBe(404);
  });

  it('batchApi create/update/read, including a 207 with errors', async () => {
    const { sim, client } = await start();
    const batch = client.crm.contacts.batchApi;
    const created = await batch.create({
      inputs: [0, 1, 2].map((i) => ({ properties: { email: `batch${i}@example.com` }, associations: [] })),
    });
    expect(created).toBeInstanceOf(BatchResponseSimplePublicObject);
    expect(created.status).toBe('COMPLETE');
    expect(created.startedAt).toBeInstanceOf(Date);
    expect(created.results).toHaveLength(3);
    const ids = created.results.map((r) => r.id);

    const updated = await batch.update({
      inputs: ids.map((id) => ({ id, properties: { jobtitle: 'Batched' } })),
    });
    expect(updated.results.every((r) => r.properties.jobtitle === 'Batched')).toBe(true);

    const read = await batch.read({
      inputs: [{ id: ids[0]! }, { id: '1' }],
      properties: ['email', 'jobtitle'],
      propertiesWithHistory: [],
    });
    expect(read).toBeInstanceOf(BatchResponseSimplePublicObjectWithErrors);
    const withErrors = read as BatchResponseSimplePublicObjectWithErrors;
    expect(withErrors.numErrors).toBe(1);
    expect(withErrors.errors?.[0]?.category).toBe('OBJECT_NOT_FOUND');
    expect(withErrors.results[0]?.properties.jobtitle).toBe('Batched');
    expect(sim.requestLog.count({ path: '/crm/v3/objects/contacts/batch/read', status: 207 })).toBe(1);
  });

  it('searchApi.doSearch sees a write once the index caught up', async () => {
    const { sim, client } = await start();
    await client.crm.contacts.basicApi.create({
      properties: { email: 'search@example.com' },
      associations: [],
    });
    const request = {
      filterGroups: [
        {
          filters: [{ propertyName: 'email', operator: FilterOperatorEnum.Eq, value: 'search@example.com' }],
        },
      ],
      sorts: ['-createdate'],
      properties: ['email'],
      limit: 10,
      after: '0',
    };
    const early = await client.crm.contacts.searchApi.doSearch(request);
    expect(early).toBeInstanceOf(CollectionResponseWithTotalSimplePublicObjectForwardPaging);
    expect(early.total).toBe(0);
    (sim.clock as ManualClock).advance(sim.state.searchLagMs);
    const found = await client.crm.contacts.searchApi.doSearch(request);
    expect(found.total).toBe(1);
    expect(found.results[0]).toBeInstanceOf(SimplePublicObject);
    expect(found.results[0]?.properties.email).toBe('search@example.com');
  });

  it('properties coreApi.getAll and associations v4 createDefault parse into the client models', async () => {
    const { sim, client } = await start();
    const props = await client.crm.properties.coreApi.getAll('contacts');
    expect(props).toBeInstanceOf(CollectionResponsePropertyNoPaging);
    const stage = props.results.find((p) => p.name === 'lifecyclestage');
    expect(stage).toBeInstanceOf(Property);
    expect(stage?.createdAt).toBeInstanceOf(Date);
    expect(stage?.options.map((o) => o.value)).toContain('customer');

    const contact = sim.crm!.contacts[1]!;
    const company = sim.crm!.companies[7]!;
    const assoc = await client.crm.associations.v4.basicApi.createDefault(
      'contacts',
      contact,
      'companies',
      company,
    );
    expect(assoc).toBeInstanceOf(BatchResponsePublicDefaultAssociation);
    expect(assoc.results[0]?.to.id).toBe(company);
    const page = await client.crm.associations.v4.basicApi.getPage('contacts', contact, 'companies');
    expect(page.results.map((r) => String(r.toObjectId))).toContain(company);
  });

  it('associations v4 batchApi: getPage, createDefault, create and archive parse into the client models', async () => {
    const { sim, client } = await start();
    const batch = client.crm.associations.v4.batchApi;
    const [c0, c1] = sim.crm!.contacts as [string, string];
    const other = sim.crm!.companies[4]!;
    const third = sim.crm!.companies[5]!;
    const lonely = sim.create('contacts', { email: 'client-lonely@example.com' }).id;

    const read = await batch.getPage('contacts', 'companies', { inputs: [{ id: c0 }, { id: lonely }] });
    // A 207 (the id with no associations is an error): the client's "with errors" model.
    expect(read).toBeInstanceOf(BatchResponsePublicAssociationMultiWithLabelWithErrors);
    expect(read.results[0]).toBeInstanceOf(PublicAssociationMultiWithLabel);
    expect(read.results.map((r) => r._from.id)).toEqual([c0]);
    expect(read.results[0]?.to.map((t) => t.toObjectId)).toEqual([sim.crm!.companies[0]]);
    expect((read as BatchResponsePublicAssociationMultiWithLabelWithErrors).numErrors).toBe(1);

    const made = await batch.createDefault('contacts', 'companies', {
      inputs: [{ _from: { id: c1 }, to: { id: other } }],
    });
    expect(made).toBeInstanceOf(BatchResponsePublicDefaultAssociation);
    expect(made.results.map((r) => [r._from.id, r.to.id])).toEqual([
      [c1, other],
      [other, c1],
    ]);
    const labelled = await batch.create('contacts', 'companies', {
      inputs: [
        {
          _from: { id: c1 },
          to: { id: third },
          types: [
            {
              associationCategory: AssociationSpecAssociationCategoryEnum.HubspotDefined,
              associationTypeId: 279,
            },
          ],
        },
      ],
    });
    expect(labelled).toBeInstanceOf(BatchResponseLabelsBetweenObjectPair);
    expect(labelled.results[0]?.toObjectId).toBe(third);
    const after = await batch.getPage('contacts', 'companies', { inputs: [{ id: c1 }] });
    expect(after.results[0]?.to.map((t) => t.toObjectId).sort()).toEqual(
      [sim.crm!.companies[1], other, third].sort(),
    );

    await batch.archive('contacts', 'companies', {
      inputs: [{ _from: { id: c1 }, to: [{ id: other }, { id: third }] }],
    });
    const left = await batch.getPage('contacts', 'companies', { inputs: [{ id: c1 }] });
    expect(left.results[0]?.to.map((t) => t.toObjectId)).toEqual([sim.crm!.companies[1]]);
  });

  it('basicApi.merge returns the merged record under a new id; batchApi.upsert marks new records', async () => {
    const { sim, client } = await start();
    const [a, b] = sim.crm!.contacts as [string, string];
    const merged = await client.crm.contacts.basicApi.merge({ primaryObjectId: a, objectIdToMerge: b });
    expect(merged).toBeInstanceOf(SimplePublicObject);
    expect([a, b]).not.toContain(merged.id);
    expect((await client.crm.contacts.basicApi.getById(b)).id).toBe(merged.id);

    const upserted = await client.crm.contacts.batchApi.upsert({
      inputs: [
        { id: 'upsert-new@example.com', idProperty: 'email', properties: { firstname: 'Up' } },
        { id: merged.properties.email!, idProperty: 'email', properties: { jobtitle: 'Merged' } },
      ],
    });
    expect(upserted.results.map((r) => r._new).sort()).toEqual([false, true]);
  });

  it("webhook requests pass the official client's own v3 signature check", async () => {
    const got: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks?app=lockstep`;
      // Signature.isValid checks the timestamp against the real time, so this simulator uses it too.
      const { sim, client } = await start({
        clock: undefined,
        webhooks: { targetUrl: url, clientSecret: 'shh' },
      });
      await client.crm.contacts.basicApi.create({
        properties: { email: 'hook@example.com' },
        associations: [],
      });
      await sim.flushWebhooks();
      expect(got).toHaveLength(1);
      const { headers, body } = got[0]!;
      const options = {
        signatureVersion: 'v3',
        method: 'POST',
        url,
        requestBody: body,
        clientSecret: 'shh',
        signature: String(headers['x-hubspot-signature-v3']),
        timestamp: Number(headers['x-hubspot-request-timestamp']),
      };
      expect(Signature.isValid(options)).toBe(true);
      expect(Signature.isValid({ ...options, clientSecret: 'other' })).toBe(false);
      expect(
        Signature.isValid({
          signature: String(headers['x-hubspot-signature']),
          clientSecret: 'shh',
          requestBody: body,
        }),
      ).toBe(true);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('a 429 from the simulator reaches the client as its error with code 429', async () => {
    const { client } = await start({ rateLimit: { perTenSeconds: 2 } });
    await client.crm.contacts.basicApi.getPage(1);
    await client.crm.contacts.basicApi.getPage(1);
    const err = await failure(client.crm.contacts.basicApi.getPage(1));
    expect(err.code).toBe(429);
    expect((err.body as { message: string }).message).toBe(
      'You have reached your ten_secondly_rolling limit.',
    );
  });
});

describe('@hubspot/api-client oauth against the simulator', () => {
  it('tokensApi.create exchanges an install code and refreshes; accessTokensApi.get describes the token', async () => {
    const app = {
      clientId: 'contract-client',
      clientSecret: 'contract-secret',
      redirectUris: ['http://localhost:4100/cb'],
      appId: 4242,
    };
    const { sim } = await start({ oauthApps: [app] });
    const client = new Client({ basePath: sim.url, numberOfApiCallRetries: 0 });
    // The client builds the install URL on app.hubspot.com: the simulator stands for that host too.
    const install = new URL(
      client.oauth.getAuthorizationUrl(
        app.clientId,
        app.redirectUris[0] as string,
        'oauth crm.objects.contacts.read',
        undefined,
        'xyz',
      ),
    );
    expect(install.origin + install.pathname).toBe('https://app.hubspot.com/oauth/authorize');
    const res = await fetch(`${sim.url}${install.pathname}${install.search}`, { redirect: 'manual' });
    const back = new URL(res.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('xyz');
    const code = back.searchParams.get('code') as string;

    const tokens = await client.oauth.tokensApi.create(
      'authorization_code',
      code,
      app.redirectUris[0],
      app.clientId,
      app.clientSecret,
    );
    expect(tokens.expiresIn).toBe(1800);
    expect(tokens.tokenType).toBe('bearer');
    expect(tokens.refreshToken).toBeTruthy();

    const info = await client.oauth.accessTokensApi.get(tokens.accessToken);
    expect(info).toMatchObject({ hubId: sim.state.portalId, appId: 4242, tokenType: 'access' });
    expect(info.scopes).toEqual(['oauth', 'crm.objects.contacts.read']);

    const crm = new Client({ accessToken: tokens.accessToken, basePath: sim.url, numberOfApiCallRetries: 0 });
    expect((await crm.crm.contacts.basicApi.getPage(1)).results).toHaveLength(1);

    const refreshed = await client.oauth.tokensApi.create(
      'refresh_token',
      undefined,
      undefined,
      app.clientId,
      app.clientSecret,
      tokens.refreshToken,
    );
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).toBe(tokens.refreshToken);

    const refused = await failure(
      client.oauth.tokensApi.create(
        'refresh_token',
        undefined,
        undefined,
        app.clientId,
        app.clientSecret,
        'na1-x',
      ),
    );
    expect(refused.code).toBe(400);
  });
});
