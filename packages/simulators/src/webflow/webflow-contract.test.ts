/**
 * Contract test: Webflow's official Node client (`webflow-api`) against the simulator, through
 * the calls a sync makes. If the client cannot use the simulator, the simulator is wrong, not
 * this test.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Webflow, WebflowClient, WebflowError } from 'webflow-api';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_OAUTH_APP,
  type StartWebflowSimulatorOptions,
  startWebflowSimulator,
  type WebflowSimulator,
} from './index.ts';

const started: WebflowSimulator[] = [];

async function start(
  options: StartWebflowSimulatorOptions = {},
  token?: string,
): Promise<{
  sim: WebflowSimulator;
  client: WebflowClient;
  cols: { companies: string; contacts: string; deals: string };
}> {
  const sim = await startWebflowSimulator({
    rateLimit: false,
    idSeed: 5,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  // No retries: a 429 or 5xx must reach the caller as the client's own error.
  const client = new WebflowClient({
    accessToken: token ?? sim.token,
    baseUrl: `${sim.url}/v2`,
    maxRetries: 0,
  });
  return { sim, client, cols: sim.crm!.collections };
}

afterEach(async () => {
  vi.unstubAllGlobals();
  while (started.length) await started.pop()!.close();
});

async function failure(p: Promise<unknown>): Promise<WebflowError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WebflowError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

type Body = { code?: string; message?: string; details?: { param: string; description: string }[] };

describe('webflow-api against the simulator', () => {
  it('sites.list/get and collections.list/get parse into the client types', async () => {
    const { sim, client, cols } = await start();
    const sites = await client.sites.list();
    expect(sites.sites).toHaveLength(1);
    const site = sites.sites![0]!;
    expect(site.id).toBe(sim.siteId);
    expect(site.displayName).toBe('Lockstep CRM');
    expect(site.createdOn).toBeInstanceOf(Date);
    expect(site.customDomains?.map((d) => d.url)).toEqual([
      'www.lockstep-crm.example',
      'lockstep-crm.example',
    ]);
    expect(site.locales?.primary?.cmsLocaleId).toMatch(/^[0-9a-f]{24}$/);
    expect((await client.sites.get(sim.siteId)).shortName).toBe('lockstep-crm');

    const list = await client.collections.list(sim.siteId);
    expect(list.collections?.map((c) => c.slug)).toEqual(['companies', 'contacts', 'deals']);
    expect(list.collections?.[0]?.lastUpdated).toBeInstanceOf(Date);

    const deals = await client.collections.get(cols.deals);
    expect(deals.displayName).toBe('Deals');
    const bySlug = Object.fromEntries(deals.fields.map((f) => [f.slug, f]));
    expect(bySlug.name).toMatchObject({ type: 'PlainText', isRequired: true });
    expect(bySlug.slug).toMatchObject({ type: 'PlainText', isRequired: true });
    expect(bySlug.amount).toMatchObject({ type: 'Number', isRequired: true, isEditable: true });
    expect(bySlug.contacts).toMatchObject({
      type: 'MultiReference',
      validations: { collectionId: cols.contacts },
    });
    const stage = bySlug.stage as unknown as { validations: { options: { id: string; name: string }[] } };
    expect(stage.validations.options.map((o) => o.name)).toEqual([
      'Lead',
      'Qualified',
      'Proposal',
      'Won',
      'Lost',
    ]);
    const types = new Set(
      (await Promise.all(Object.values(cols).map((id) => client.collections.get(id)))).flatMap((c) =>
        c.fields.map((f) => f.type),
      ),
    );
    for (const t of [
      'PlainText',
      'RichText',
      'Image',
      'MultiImage',
      'Link',
      'Email',
      'Phone',
      'Number',
    ] as const)
      expect(types).toContain(t);
    for (const t of ['DateTime', 'Switch', 'Color', 'Option', 'Reference', 'MultiReference', 'File'] as const)
      expect(types).toContain(t);
  });

  it('listItems pages with offset/limit to the end; getItem reads one', async () => {
    const { sim, client, cols } = await start();
    const seen: string[] = [];
    const totals: number[] = [];
    let offset = 0;
    for (;;) {
      const page = await client.collections.items.listItems(cols.contacts, { offset, limit: 20 });
      seen.push(...page.items!.map((i) => i.id!));
      totals.push(page.pagination!.total!);
      expect(page.pagination).toMatchObject({ limit: 20, offset });
      offset += page.items!.length;
      if (page.items!.length < 20) break;
    }
    expect(seen).toEqual(sim.crm!.contacts);
    expect(new Set(totals)).toEqual(new Set([50]));

    const one = await client.collections.items.getItem(cols.contacts, sim.crm!.contacts[0]!);
    expect(one.fieldData).toMatchObject({
      name: 'Ada Moreau',
      slug: 'ada-moreau',
      email: 'ada.moreau@acme-analytics.com',
    });
    expect(one.fieldData.company).toBe(sim.crm!.companies[0]);
    expect(one.isDraft).toBe(false);
    expect(one.lastPublished).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(Date.parse(one.lastUpdated!)).toBeGreaterThanOrEqual(Date.parse(one.createdOn!));

    // The client turns the JSON nulls it parses into undefined.
    const draft = await client.collections.items.getItem(cols.contacts, sim.crm!.contacts.at(-1)!);
    expect(draft.isDraft).toBe(true);
    expect(draft.lastPublished).toBeUndefined();
  });

  it('create, update and delete (single and bulk) round-trip; live shows only published values', async () => {
    const { sim, client, cols } = await start();
    const clock = sim.clock as ManualClock;
    const company = sim.crm!.companies[1]!;

    const created = await client.collections.items.createItem(cols.contacts, {
      isArchived: false,
      isDraft: false,
      fieldData: { name: 'Client Person', slug: 'client-person', email: 'client@example.com', company },
    });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.fieldData).toMatchObject({ name: 'Client Person', company });
    expect(created.lastPublished).toBeUndefined(); // null in JSON: never published
    expect(created.isDraft).toBe(false);

    const bulk = (await client.collections.items.createItems(cols.contacts, {
      fieldData: [
        { name: 'Bulk One', slug: 'bulk-one', email: 'one@example.com' },
        { name: 'Bulk Two', slug: 'bulk-two', email: 'two@example.com' },
      ],
    })) as unknown as { items: { id: string; fieldData: { slug: string } }[] };
    expect(bulk.items.map((i) => i.fieldData.slug)).toEqual(['bulk-one', 'bulk-two']);
    const bulkIds = bulk.items.map((i) => i.id);

    clock.advance(5000);
    const updated = (await client.collections.items.updateItems(cols.contacts, {
      items: [
        { id: created.id!, fieldData: { 'job-title': 'Buyer' } },
        { id: bulkIds[0]!, fieldData: { phone: '+1 555 0199' } },
      ],
    })) as Webflow.CollectionItemList;
    expect(updated.items?.map((i) => i.fieldData['job-title'] ?? i.fieldData.phone)).toEqual([
      'Buyer',
      '+1 555 0199',
    ]);
    expect(Date.parse(updated.items![0]!.lastUpdated!) - Date.parse(created.lastUpdated!)).toBe(5000);

    // Nothing new is live until it is published.
    const liveBefore = await client.collections.items.listItemsLive(cols.contacts);
    expect(liveBefore.items!.map((i) => i.id)).not.toContain(created.id);
    expect(liveBefore.pagination?.total).toBe(48);

    const published = await client.collections.items.publishItem(cols.contacts, {
      itemIds: [created.id!, 'ffffffffffffffffffffffff'],
    });
    expect(published.publishedItemIds).toEqual([created.id]);
    expect(published.errors).toEqual(['Staging item ID ffffffffffffffffffffffff not found.']);
    const live = await client.collections.items.getItemLive(cols.contacts, created.id!);
    expect(live.fieldData['job-title']).toBe('Buyer');

    // A staged change stays off the live site until published again.
    await client.collections.items.updateItem(cols.contacts, created.id!, {
      fieldData: { 'job-title': 'Head Buyer' },
    });
    expect(
      (await client.collections.items.getItemLive(cols.contacts, created.id!)).fieldData['job-title'],
    ).toBe('Buyer');
    expect((await client.collections.items.getItem(cols.contacts, created.id!)).fieldData['job-title']).toBe(
      'Head Buyer',
    );

    await client.collections.items.deleteItems(cols.contacts, { items: bulkIds.map((id) => ({ id })) });
    await client.collections.items.deleteItem(cols.contacts, created.id!);
    const after = await client.collections.items.listItems(cols.contacts, { limit: 100 });
    expect(after.pagination?.total).toBe(50);
    expect(after.items!.map((i) => i.id)).not.toContain(created.id);
  });

  it('sites.publish takes queued items live and refuses a second publish within a minute (429)', async () => {
    const { sim, client, cols } = await start();
    const deal = sim.crm!.deals[0]!;
    expect((await client.collections.items.getItemLive(cols.deals, deal)).fieldData.amount).toBe(5000);
    expect((await client.collections.items.getItem(cols.deals, deal)).fieldData.amount).toBe(6000);

    const domains = (await client.sites.get(sim.siteId)).customDomains!;
    const res = await client.sites.publish(sim.siteId, {
      customDomains: [domains[0]!.id],
      publishToWebflowSubdomain: true,
    });
    expect(res.publishToWebflowSubdomain).toBe(true);
    expect(res.customDomains?.map((d) => d.url)).toEqual(['www.lockstep-crm.example']);
    expect((await client.collections.items.getItemLive(cols.deals, deal)).fieldData.amount).toBe(6000);
    // Drafts stay off the live site.
    const draft = await failure(
      client.collections.items.getItemLive(cols.contacts, sim.crm!.contacts.at(-1)!),
    );
    expect(draft).toBeInstanceOf(Webflow.NotFoundError);

    const again = await failure(client.sites.publish(sim.siteId, { publishToWebflowSubdomain: true }));
    expect(again).toBeInstanceOf(Webflow.TooManyRequestsError);
    expect(again.statusCode).toBe(429);
    expect(again.rawResponse?.headers.get('retry-after')).toBe('60');
    (sim.clock as ManualClock).advance(60_000);
    await expect(
      client.sites.publish(sim.siteId, { publishToWebflowSubdomain: true }),
    ).resolves.toMatchObject({
      publishToWebflowSubdomain: true,
    });
  });

  it('errors surface as the client errors: 404, validation 400, 401, 403', async () => {
    const { sim, client, cols } = await start({ tokens: [{ token: 'read-only', scopes: ['cms:read'] }] });

    const missing = await failure(
      client.collections.items.getItem(cols.contacts, 'aaaaaaaaaaaaaaaaaaaaaaaa'),
    );
    expect(missing).toBeInstanceOf(Webflow.NotFoundError);
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toMatchObject({ code: 'resource_not_found', details: [] });

    const dupe = await failure(
      client.collections.items.createItem(cols.contacts, {
        fieldData: { name: 'Someone', slug: 'ada-moreau', email: 'someone@example.com' },
      }),
    );
    expect(dupe).toBeInstanceOf(Webflow.BadRequestError);
    expect(dupe.statusCode).toBe(400);
    expect(dupe.body).toMatchObject({
      message: 'Validation Error',
      code: 'validation_error',
      details: [{ param: 'slug', description: "Unique value is already in database: 'ada-moreau'" }],
    });

    const invalid = await failure(
      client.collections.items.createItem(cols.deals, {
        fieldData: { name: 'Bad deal', slug: 'bad-deal', company: 'bbbbbbbbbbbbbbbbbbbbbbbb' },
      }),
    );
    expect(invalid.statusCode).toBe(400);
    expect((invalid.body as Body).details).toEqual([
      { param: 'company', description: "Referenced item not found: 'bbbbbbbbbbbbbbbbbbbbbbbb'" },
      { param: 'amount', description: 'Field is required' },
    ]);

    const nobody = new WebflowClient({ accessToken: 'not-a-token', baseUrl: `${sim.url}/v2`, maxRetries: 0 });
    const unauthorized = await failure(nobody.collections.items.listItems(cols.contacts));
    expect(unauthorized).toBeInstanceOf(Webflow.UnauthorizedError);
    expect(unauthorized.body).toMatchObject({ code: 'not_authorized', message: 'Request not authorized' });

    const readOnly = new WebflowClient({ accessToken: 'read-only', baseUrl: `${sim.url}/v2`, maxRetries: 0 });
    expect((await readOnly.collections.items.listItems(cols.contacts, { limit: 1 })).items).toHaveLength(1);
    const forbidden = await failure(
      readOnly.collections.items.createItem(cols.contacts, { fieldData: { name: 'X', slug: 'x' } }),
    );
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.body).toMatchObject({
      code: 'missing_scopes',
      message: 'OAuthForbidden: You are missing the following scopes - cms:write',
    });
  });

  it('a rate-limited call fails with TooManyRequestsError carrying Retry-After', async () => {
    const { client, cols } = await start({ rateLimit: { perMinute: 2 } });
    await client.collections.items.listItems(cols.companies);
    const { rawResponse } = await client.collections.items.listItems(cols.companies).withRawResponse();
    expect(rawResponse.headers.get('x-ratelimit-remaining')).toBe('0');
    const limited = await failure(client.collections.items.listItems(cols.companies));
    expect(limited).toBeInstanceOf(Webflow.TooManyRequestsError);
    expect(limited.body).toMatchObject({ code: 'too_many_requests' });
    expect(limited.rawResponse?.headers.get('retry-after')).toBe('60');
    expect(limited.rawResponse?.headers.get('x-ratelimit-limit')).toBe('2');
  });

  it('an image over 4 MB is dropped on write and the item saved without it', async () => {
    const { sim, client, cols } = await start();
    sim.setRemoteFile('https://files.example.com/huge.png', 5 * 1024 * 1024);
    const item = await client.collections.items.createItem(cols.contacts, {
      fieldData: {
        name: 'Big Picture',
        slug: 'big-picture',
        email: 'big@example.com',
        headshot: { url: 'https://files.example.com/huge.png' },
      },
    });
    expect(item.fieldData.headshot).toBeUndefined();
    expect(item.fieldData.name).toBe('Big Picture');

    const small = await client.collections.items.updateItem(cols.contacts, item.id!, {
      fieldData: { headshot: { url: 'https://files.example.com/small.png', alt: 'Face' } },
    });
    expect(small.fieldData.headshot).toMatchObject({
      fileId: expect.stringMatching(/^[0-9a-f]{24}$/),
      url: expect.stringMatching(/^https:\/\/cdn\.prod\.website-files\.com\/.*_small\.png$/),
      alt: 'Face',
    });

    const strict = await failure(
      client.collections.items.updateItem(cols.contacts, item.id!, {
        skipInvalidFiles: false,
        fieldData: { headshot: { url: 'https://files.example.com/huge.png' } },
      }),
    );
    expect(strict.statusCode).toBe(400);
    expect((strict.body as Body).details?.[0]?.param).toBe('headshot');
  });

  it('OAuth: WebflowClient.authorizeURL and getAccessToken sign in; the token introspects and reads the site', async () => {
    const { sim } = await start();
    const app = DEFAULT_OAUTH_APP;
    const url = new URL(
      WebflowClient.authorizeURL({
        clientId: app.clientId,
        state: 'state-123',
        redirectUri: app.redirectUri,
        scope: ['sites:read', 'cms:read', 'cms:write', 'authorized_user:read'],
      }),
    );
    expect(url.origin + url.pathname).toBe('https://webflow.com/oauth/authorize');
    // The authorize page is webflow.com's: the person's browser goes to the simulator instead.
    const consent = await fetch(`${sim.url}${url.pathname}${url.search}`, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('state-123');

    // getAccessToken has api.webflow.com built in: its one request is sent to the simulator.
    const real = globalThis.fetch;
    const seen: string[] = [];
    vi.stubGlobal('fetch', (input: string | URL | Request, init?: RequestInit) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      seen.push(target.toString());
      return real(`${sim.url}${target.pathname}${target.search}`, init);
    });
    const accessToken = await WebflowClient.getAccessToken({
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      code: back.searchParams.get('code')!,
      redirectUri: app.redirectUri,
    });
    vi.unstubAllGlobals();
    expect(seen).toEqual(['https://api.webflow.com/oauth/access_token']);
    expect(accessToken).toMatch(/^[0-9a-f]{64}$/);

    const client = new WebflowClient({ accessToken, baseUrl: `${sim.url}/v2`, maxRetries: 0 });
    const info = await client.token.introspect();
    expect(info.authorization?.grantType).toBe('authorization_code');
    expect(info.authorization?.authorizedTo?.siteIds).toEqual([sim.siteId]);
    expect(info.application?.displayName).toBe('Simulated App');
    expect(await client.token.authorizedBy()).toEqual(sim.oauth.user);
    expect((await client.sites.list()).sites?.map((s) => s.id)).toEqual([sim.siteId]);

    // A spent code: the client's own error with Webflow's status.
    vi.stubGlobal('fetch', (input: string | URL | Request, init?: RequestInit) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      return real(`${sim.url}${target.pathname}${target.search}`, init);
    });
    const spent = await failure(
      WebflowClient.getAccessToken({
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        code: back.searchParams.get('code')!,
        redirectUri: app.redirectUri,
      }),
    );
    expect(spent.statusCode).toBe(400);
    expect(spent.body).toMatchObject({ error: 'invalid_grant' });
  });
});
