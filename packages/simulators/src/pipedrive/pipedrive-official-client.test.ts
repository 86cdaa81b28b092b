/**
 * Contract test: Pipedrive's official Node client (`pipedrive` on npm) against the simulator.
 * If the client cannot use the simulator, the simulator is wrong, not this test.
 *
 * The client rejects a failed call with the response body only (its error interceptor); the
 * status and headers are read through the client's own `baseOptions` (axios request options),
 * whose transformResponse sees them.
 */
import { v1, v2 } from 'pipedrive';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type PipedriveSimulator,
  type StartPipedriveSimulatorOptions,
  startPipedriveSimulator,
} from './index.ts';

const started: PipedriveSimulator[] = [];

type Seen = { status: number | undefined; headers: Record<string, string> };

async function start(options: StartPipedriveSimulatorOptions = {}) {
  const clock = new ManualClock();
  const sim = await startPipedriveSimulator({ rateLimit: false, clock, ...options });
  started.push(sim);
  const seen: Seen[] = [];
  const config = new v2.Configuration({ apiKey: sim.token, basePath: `${sim.url}/api/v2` });
  config.baseOptions = {
    transformResponse: [
      (data: unknown, headers: Record<string, string>, status?: number) => {
        seen.push({ status, headers: { ...headers } });
        return typeof data === 'string' && data !== '' ? JSON.parse(data) : data;
      },
    ],
  };
  return {
    sim,
    clock,
    seen,
    persons: new v2.PersonsApi(config),
    organizations: new v2.OrganizationsApi(config),
    deals: new v2.DealsApi(config),
    v1config: new v1.Configuration({ apiKey: sim.token, basePath: `${sim.url}/api/v1` }),
  };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function failure(p: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected the call to fail');
}

describe('pipedrive (official client) against the simulator', () => {
  it('v2 PersonsApi.getPersons pages with the cursor to the end', async () => {
    const { sim, persons } = await start({ seed: { persons: 23 } });
    const ids: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await persons.getPersons({ limit: 10, ...(cursor ? { cursor } : {}) });
      expect(page.success).toBe(true);
      pages += 1;
      for (const p of page.data ?? []) {
        expect(typeof p.id).toBe('number');
        expect(p.emails?.[0]).toMatchObject({ primary: true, label: 'work' });
        expect(p.emails?.[0]?.value).toMatch(/@example\.com$/);
        expect(p.add_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
        ids.push(p.id as number);
      }
      cursor = page.additional_data?.next_cursor ?? undefined;
    } while (cursor);
    expect(pages).toBe(3);
    expect(ids).toEqual(sim.crm?.persons);
  });

  it('get by id, create/update/delete round trip with custom field values', async () => {
    const { sim, persons } = await start();
    const crm = sim.crm;
    if (!crm) throw new Error('seeded');
    const leadSource = crm.fields.leadSource;
    const referral = leadSource.options?.find((o) => o.label === 'Referral')?.id;
    const interests = crm.fields.interests.options?.map((o) => o.id) ?? [];
    expect(leadSource.key).toMatch(/^[0-9a-f]{40}$/);

    const one = await persons.getPerson({ id: crm.persons[0] as number });
    expect(one.data?.id).toBe(crm.persons[0]);
    expect(one.data?.org_id).toBe(crm.organizations[0]);
    expect(one.data?.custom_fields?.[leadSource.key]).toBeTypeOf('number');

    const created = await persons.addPerson({
      AddPersonRequest: {
        name: 'Client Person',
        org_id: crm.organizations[1] as number,
        emails: [{ value: 'client@example.com', primary: true, label: 'work' }],
        phones: [{ value: '+1 555 9999', primary: true, label: 'mobile' }],
        custom_fields: {
          [leadSource.key]: referral,
          [crm.fields.interests.key]: [interests[0], interests[2]],
        },
      },
    });
    const id = created.data?.id as number;
    expect(created.data).toMatchObject({
      name: 'Client Person',
      first_name: 'Client',
      last_name: 'Person',
      is_deleted: false,
      org_id: crm.organizations[1],
    });
    expect(created.data?.custom_fields?.[leadSource.key]).toBe(referral);
    expect(created.data?.custom_fields?.[crm.fields.interests.key]).toEqual([interests[0], interests[2]]);

    const updated = await persons.updatePerson({
      id,
      UpdatePersonRequest: { name: 'Client Renamed', custom_fields: { [leadSource.key]: null } },
    });
    expect(updated.data?.name).toBe('Client Renamed');
    expect(updated.data?.custom_fields?.[leadSource.key]).toBeNull();
    // custom_fields= limits the custom fields returned.
    const limited = await persons.getPerson({ id, custom_fields: crm.fields.interests.key });
    expect(Object.keys(limited.data?.custom_fields ?? {})).toEqual([crm.fields.interests.key]);

    const deleted = await persons.deletePerson({ id });
    expect(deleted).toEqual({ success: true, data: { id } });
    const list = await persons.getPersons({ ids: String(id) });
    expect(list.data).toEqual([]);
    const gone = await failure(persons.getPerson({ id }));
    expect(gone).toMatchObject({ success: false, error: 'Person not found' });
  });

  it('deals: stage places the pipeline; deleted deals are read back with status=deleted', async () => {
    const { sim, deals } = await start();
    const crm = sim.crm;
    if (!crm) throw new Error('seeded');
    const created = await deals.addDeal({
      AddDealRequest: {
        title: 'Client deal',
        value: 2500,
        currency: 'EUR',
        person_id: crm.persons[2] as number,
        org_id: crm.organizations[2] as number,
        stage_id: 5,
      },
    });
    expect(created.data).toMatchObject({
      title: 'Client deal',
      pipeline_id: 2,
      stage_id: 5,
      status: 'open',
      value: 2500,
    });
    const won = await deals.updateDeal({
      id: created.data?.id as number,
      UpdateDealRequest: { status: 'won' },
    });
    expect(won.data?.won_time).toMatch(/Z$/);
    await deals.deleteDeal({ id: created.data?.id as number });
    const open = await deals.getDeals({ ids: String(created.data?.id) });
    expect(open.data).toEqual([]);
    const deleted = await deals.getDeals({ status: 'deleted', ids: String(created.data?.id) });
    expect(deleted.data?.[0]).toMatchObject({ id: created.data?.id, is_deleted: true });
  });

  it('updated_since / updated_until filter on update_time; sort_by update_time', async () => {
    const { sim, clock, organizations } = await start();
    const crm = sim.crm;
    if (!crm) throw new Error('seeded');
    clock.advance(60_000);
    const since = new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    clock.advance(1000);
    await organizations.updateOrganization({
      id: crm.organizations[3] as number,
      UpdateOrganizationRequest: { name: 'Umbrella Ltd' },
    });
    clock.advance(1000);
    sim.update('organizations', crm.organizations[1] as number, { website: 'https://globex.example.org' });
    const changed = await organizations.getOrganizations({
      updated_since: since,
      sort_by: 'update_time',
      sort_direction: 'desc',
    });
    expect(changed.data?.map((o) => o.id)).toEqual([crm.organizations[1], crm.organizations[3]]);
    const before = await organizations.getOrganizations({ updated_until: since });
    expect(before.data).toHaveLength(crm.organizations.length - 2);
  });

  it('a 404 and a 400 reach the caller as the client errors, with their statuses', async () => {
    const { sim, persons, seen } = await start();
    const missing = await failure(persons.getPerson({ id: 424242 }));
    expect(missing).toMatchObject({ success: false, error: 'Person not found', data: null });
    expect(seen.at(-1)?.status).toBe(404);

    const key = sim.crm?.fields.leadSource.key as string;
    const bad = await failure(
      persons.updatePerson({
        id: sim.crm?.persons[0] as number,
        UpdatePersonRequest: { custom_fields: { [key]: 999_999 } },
      }),
    );
    expect(bad).toMatchObject({ success: false, data: null, additional_data: null });
    expect(String(bad.error)).toContain('999999');
    expect(bad.error_info).toMatch(/developers\.pipedrive\.com/);
    expect(seen.at(-1)?.status).toBe(400);
    const tooMany = await failure(persons.getPersons({ limit: 501 }));
    expect(tooMany.success).toBe(false);
    expect(seen.at(-1)?.status).toBe(400);
  });

  it('a 429 reaches the caller with errorCode 429 and the rate-limit headers', async () => {
    const { persons, seen } = await start({ rateLimit: { burst: 2 } });
    await persons.getPersons({ limit: 1 });
    await persons.getPersons({ limit: 1 });
    const limited = await failure(persons.getPersons({ limit: 1 }));
    expect(limited).toMatchObject({ success: false, errorCode: 429, error: 'Request over limit' });
    const last = seen.at(-1);
    expect(last?.status).toBe(429);
    expect(last?.headers['x-ratelimit-limit']).toBe('2');
    expect(last?.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(last?.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(last?.headers['x-daily-requests-left']).toBeDefined();
  });

  it('search persons by term, exact_match and fields', async () => {
    const { persons } = await start();
    const found = await persons.searchPersons({ term: 'hopper' });
    const items = found.data?.items ?? [];
    expect(items.length).toBeGreaterThan(0);
    expect(items[0]?.item).toMatchObject({ type: 'person' });
    expect(items[0]?.item?.name).toMatch(/Hopper/);
    expect(items[0]?.item?.emails?.[0]).toMatch(/@example\.com$/);
    const exact = await persons.searchPersons({ term: 'grace hopper', exact_match: true, fields: 'name' });
    expect(exact.data?.items?.every((i) => i.item?.name === 'Grace Hopper')).toBe(true);
    const byEmail = await persons.searchPersons({ term: 'hopper', fields: 'email' });
    expect(byEmail.data?.items?.length).toBe(items.length);
  });

  it('v1: PersonFieldsApi lists fields with hash keys and option ids; WebhooksApi adds, lists, deletes', async () => {
    const { sim, v1config } = await start();
    const fieldsApi = new v1.PersonFieldsApi(v1config);
    const fields = await fieldsApi.getPersonFields({ start: 0, limit: 100 });
    const leadSource = fields.data.find((f) => f.name === 'Lead source');
    expect(leadSource?.key).toMatch(/^[0-9a-f]{40}$/);
    expect(leadSource?.field_type).toBe('enum');
    expect(leadSource?.options).toEqual(
      expect.arrayContaining([expect.objectContaining({ label: 'Referral', id: expect.any(Number) })]),
    );
    const id = fields.data.find((f) => f.key === 'id');
    expect(id).toMatchObject({ edit_flag: false, bulk_edit_allowed: false });

    const hooks = new v1.WebhooksApi(v1config);
    const added = await hooks.addWebhook({
      AddWebhookRequest: {
        subscription_url: 'http://127.0.0.1:9/hook',
        event_action: 'change',
        event_object: 'person',
        name: 'Lockstep',
        http_auth_user: 'u',
        http_auth_password: 'p',
        version: '2.0',
      },
    });
    expect(added.data).toMatchObject({
      event_action: 'change',
      event_object: 'person',
      version: '2.0',
      is_active: 1,
    });
    const listed = await hooks.getWebhooks();
    expect(listed.data?.map((w) => w.id)).toEqual([added.data?.id]);
    const removed = await hooks.deleteWebhook({ id: added.data?.id as number });
    expect(removed.success).toBe(true);
    expect((await hooks.getWebhooks()).data).toEqual([]);
    expect(sim.webhooks.active()).toEqual([]);
  });

  it('OAuth2Configuration: its authorize page and code exchange, the API on api_domain with the bearer token, refresh and revoke', async () => {
    const { sim } = await start();
    const client = sim.oauth.clients.values().next().value;
    if (!client) throw new Error('client');
    const oauth = new v2.OAuth2Configuration({
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      redirectUri: client.redirectUri,
      host: sim.url,
    });
    // The client's own authorize URL, as a browser opens it: consent redirects back with a code.
    const consent = await fetch(`${oauth.authorizationUrl}&state=s1`, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(client.redirectUri);
    expect(back.searchParams.get('state')).toBe('s1');
    const token = await oauth.authorize(back.searchParams.get('code') as string);
    expect(token.token_type).toBe('Bearer');
    expect(token.expires_in).toBe(3599);
    // The client sends its API calls to the company's host the token answer names.
    expect(token.api_domain).toBe(sim.companyUrl);
    expect(oauth.basePath).toBe(`${sim.companyUrl}/api/v2`);
    const persons = new v2.PersonsApi(
      new v2.Configuration({ accessToken: oauth.getAccessToken, basePath: oauth.basePath }),
    );
    const page = await persons.getPersons({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(sim.companyRequestLog.count({ method: 'GET', path: '/api/v2/persons' })).toBe(1);
    const refreshed = await oauth.tokenRefresh();
    expect(refreshed.access_token).not.toBe(token.access_token);
    expect(refreshed.refresh_token).toBe(token.refresh_token);
    expect(refreshed.api_domain).toBe(sim.companyUrl);
    // Revoking the refresh token (uninstalling) ends the access token too.
    await oauth.revokeToken('refresh_token');
    await expect(persons.getPersons({ limit: 1 })).rejects.toMatchObject({
      errorCode: 401,
      error: 'Invalid token: access token is invalid',
    });
  });
});
