/**
 * Contract test. Affinity publishes no SDK and no maintained npm client generated from its v2
 * OpenAPI document exists, so the client here is openapi-fetch typed by hand-written path types
 * (`affinity-api.ts`), written field by field from the v2 OpenAPI document (2024-01-01) and the
 * v1 reference. Every response body is parsed with the matching strict zod schema, so a field
 * the document does not name, a missing required field or a wrong type fails the call (see the
 * first test). v2 calls use Bearer auth; v1 writes use HTTP Basic with the key as password.
 */
import createClient from 'openapi-fetch';
import { afterEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ManualClock } from '../http.ts';
import {
  Company,
  FieldMetadata,
  List,
  ListEntry,
  Opportunity,
  Person,
  paged,
  V1Errors,
  V1Field,
  V1FieldValue,
  V1ListEntry,
  V1Opportunity,
  V1Organization,
  type V1Paths,
  V1Person,
  V1Success,
  V2Errors,
  type V2Paths,
  WhoAmI,
} from './affinity-api.ts';
import {
  type AffinitySimulator,
  type StartAffinitySimulatorOptions,
  startAffinitySimulator,
} from './index.ts';

const started: AffinitySimulator[] = [];

async function start(options: StartAffinitySimulatorOptions = {}) {
  const sim = await startAffinitySimulator({ clock: new ManualClock(), rateLimit: false, ...options });
  started.push(sim);
  const v2 = createClient<V2Paths>({ baseUrl: sim.url, headers: { Authorization: `Bearer ${sim.token}` } });
  const v1 = createClient<V1Paths>({
    baseUrl: sim.url,
    headers: { Authorization: `Basic ${Buffer.from(`:${sim.token}`).toString('base64')}` },
  });
  return { sim, v1, v2 };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

type Result<T> = { data?: T; error?: unknown; response: Response };

/** The body of a 200, checked against the schema. */
async function ok<S extends z.ZodType>(schema: S, p: Promise<Result<unknown>>): Promise<z.output<S>> {
  const { data, error, response } = await p;
  if (error !== undefined || response.status !== 200)
    throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(error)}`);
  return schema.parse(data);
}

/** The status and body of a failed call, checked against the error schema. */
async function failure<S extends z.ZodType>(schema: S, p: Promise<Result<unknown>>) {
  const { data, error, response } = await p;
  if (data !== undefined) throw new Error(`expected an error, got ${response.status}`);
  return { status: response.status, body: schema.parse(error), headers: response.headers };
}

const cursorOf = (url: string | null | undefined) =>
  url ? (new URL(url).searchParams.get('cursor') ?? undefined) : undefined;

describe('Affinity simulator through openapi-fetch typed from the v2 OpenAPI document and v1 reference', () => {
  it('a response that does not match the document fails the schema (the contract has teeth)', async () => {
    const { sim, v2 } = await start();
    sim.faults.next({
      path: '/v2/persons',
      status: 200,
      body: { data: [{ id: 1, firstName: 'A' }], pagination: {} },
    });
    await expect(ok(paged(Person), v2.GET('/v2/persons'))).rejects.toThrow(/emailAddresses|lastName/);
  });

  it('whoami names the tenant, the key owner and an api-key grant', async () => {
    const { sim, v2 } = await start();
    const me = await ok(WhoAmI, v2.GET('/v2/auth/whoami'));
    expect(me.user).toMatchObject({
      firstName: 'Maya',
      lastName: 'Chen',
      emailAddress: 'maya@lockstep-ventures.com',
    });
    expect(me.grant.type).toBe('api-key');
    expect(me.tenant.name).toBe(sim.state.tenant.name);
  });

  it('pages through every person with cursors to the end, with field data when asked', async () => {
    const { sim, v2 } = await start();
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let withJobTitle = 0;
    do {
      const page = await ok(
        paged(Person),
        v2.GET('/v2/persons', {
          params: { query: cursor ? { cursor } : { limit: 7, fieldTypes: ['global', 'enriched'] } },
        }),
      );
      pages += 1;
      if (pages > 1) expect(page.pagination.prevUrl).toMatch(/cursor=/);
      for (const p of page.data) {
        seen.push(p.id);
        // The cursor keeps the field selection, so later pages carry fields too.
        expect(p.fields?.map((f) => f.id)).toContain('affinity-data-job-titles');
        const title = p.fields?.find((f) => f.name === 'Job Title')?.value;
        if (title?.type === 'text' && title.data) withJobTitle += 1;
      }
      expect(page.data.length).toBeLessThanOrEqual(7);
      cursor = cursorOf(page.pagination.nextUrl);
    } while (cursor);
    expect(seen).toEqual([...sim.state.persons.keys()].sort((a, b) => a - b));
    expect(seen.length).toBe(32); // 30 seeded contacts and the 2 users
    expect(pages).toBe(5);
    expect(withJobTitle).toBe(30);
  });

  it('companies carry domains and global/enriched field values in the documented value shapes', async () => {
    const { sim, v2 } = await start();
    const orgId = sim.seed?.organizations[0] as number;
    const industryId = `field-${sim.seed?.fields.industry}`;
    const c = await ok(
      Company,
      v2.GET('/v2/companies/{companyId}', {
        params: { path: { companyId: orgId }, query: { fieldIds: [industryId, 'affinity-data-location'] } },
      }),
    );
    expect(c).toMatchObject({
      name: 'Northwind Analytics',
      domain: 'northwind.io',
      domains: ['northwind.io'],
      isGlobal: false,
    });
    expect(c.fields?.map((f) => f.id)).toEqual(['affinity-data-location', industryId]);
    expect(c.fields?.[1]?.value).toEqual({
      type: 'dropdown-multi',
      data: [{ dropdownOptionId: expect.any(Number), text: 'Software' }],
    });
    expect(c.fields?.[0]).toMatchObject({
      type: 'enriched',
      enrichmentSource: 'affinity-data',
      value: { type: 'location', data: { city: 'Seattle' } },
    });
    const list = await ok(paged(Company), v2.GET('/v2/companies', { params: { query: { ids: [orgId] } } }));
    expect(list.data.map((x) => x.id)).toEqual([orgId]);
    expect(list.data[0]?.fields).toBeUndefined();
  });

  it('reads lists, list fields and opportunity list entries with list-specific values', async () => {
    const { sim, v2 } = await start();
    const lists = await ok(paged(List), v2.GET('/v2/lists'));
    expect(lists.data.map((l) => [l.name, l.type])).toEqual([
      ['Deal Pipeline', 'opportunity'],
      ['Portfolio', 'company'],
      ['Founders', 'person'],
    ]);
    const pipeline = sim.seed?.lists.pipeline as number;
    const fields = await ok(
      paged(FieldMetadata),
      v2.GET('/v2/lists/{listId}/fields', { params: { path: { listId: pipeline } } }),
    );
    expect(fields.data.map((f) => [f.name, f.valueType])).toEqual([
      ['Status', 'ranked-dropdown'],
      ['Amount', 'number'],
      ['Owners', 'person-multi'],
      ['Close Date', 'datetime'],
    ]);
    const entries = await ok(
      paged(ListEntry),
      v2.GET('/v2/lists/{listId}/list-entries', {
        params: { path: { listId: pipeline }, query: { fieldTypes: ['list'] } },
      }),
    );
    expect(entries.data).toHaveLength(8);
    const first = entries.data[0];
    if (first?.type !== 'opportunity') throw new Error('expected an opportunity entry');
    expect(first.entity.name).toBe('Northwind Analytics Series A');
    const byName = Object.fromEntries((first.entity.fields ?? []).map((f) => [f.name, f.value]));
    expect(byName.Status).toMatchObject({ type: 'ranked-dropdown', data: { text: 'Lead', rank: 0 } });
    expect(byName.Amount).toEqual({ type: 'number', data: 250000 });
    expect(byName.Owners).toMatchObject({
      type: 'person-multi',
      data: [{ firstName: 'Maya', type: 'internal' }],
    });
    expect(byName['Close Date']).toEqual({ type: 'datetime', data: '2026-03-01T00:00:00.000Z' });
    const single = await ok(
      ListEntry,
      v2.GET('/v2/lists/{listId}/list-entries/{listEntryId}', {
        params: { path: { listId: pipeline, listEntryId: first.id } },
      }),
    );
    expect(single).toMatchObject({ id: first.id, type: 'opportunity', listId: pipeline });
    const opp = await ok(
      Opportunity,
      v2.GET('/v2/opportunities/{opportunityId}', { params: { path: { opportunityId: first.entity.id } } }),
    );
    expect(opp).toEqual({ id: first.entity.id, name: 'Northwind Analytics Series A', listId: pipeline });
  });

  it('creates, updates and deletes a person through v1 and reads each change back through v2', async () => {
    const { sim, v1, v2 } = await start();
    const orgId = sim.seed?.organizations[1] as number;
    const created = await ok(
      V1Person,
      v1.POST('/persons', {
        body: {
          first_name: 'Alice',
          last_name: 'Doe',
          emails: ['Alice@Example.com'],
          organization_ids: [orgId],
        },
      }),
    );
    expect(created).toMatchObject({
      type: 0,
      first_name: 'Alice',
      primary_email: 'alice@example.com',
      organization_ids: [orgId],
    });
    const read = await ok(
      Person,
      v2.GET('/v2/persons/{personId}', { params: { path: { personId: created.id } } }),
    );
    expect(read).toEqual({
      id: created.id,
      firstName: 'Alice',
      lastName: 'Doe',
      primaryEmailAddress: 'alice@example.com',
      emailAddresses: ['alice@example.com'],
      type: 'external',
    });
    const updated = await ok(
      V1Person,
      v1.PUT('/persons/{person_id}', {
        params: { path: { person_id: created.id } },
        body: { first_name: 'Allison', emails: ['alice@example.com', 'allison@example.com'] },
      }),
    );
    expect(updated).toMatchObject({
      first_name: 'Allison',
      last_name: 'Doe',
      emails: ['alice@example.com', 'allison@example.com'],
    });
    const jobTitle = sim.seed?.fields.jobTitle as number;
    const fv = await ok(
      V1FieldValue,
      v1.POST('/field-values', { body: { field_id: jobTitle, entity_id: created.id, value: 'CTO' } }),
    );
    expect(fv).toMatchObject({
      field_id: jobTitle,
      entity_id: created.id,
      list_entry_id: null,
      value: 'CTO',
      updated_at: null,
    });
    const changed = await ok(
      V1FieldValue,
      v1.PUT('/field-values/{field_value_id}', {
        params: { path: { field_value_id: fv.id } },
        body: { value: 'CEO' },
      }),
    );
    expect(changed.value).toBe('CEO');
    expect(changed.updated_at).not.toBeNull();
    const withField = await ok(
      Person,
      v2.GET('/v2/persons/{personId}', {
        params: { path: { personId: created.id }, query: { fieldIds: [`field-${jobTitle}`] } },
      }),
    );
    expect(withField.fields?.[0]?.value).toEqual({ type: 'text', data: 'CEO' });
    const values = await ok(
      V1FieldValue.array(),
      v1.GET('/field-values', { params: { query: { person_id: created.id } } }),
    );
    expect(values.map((v) => v.id)).toEqual([fv.id]);
    expect(
      await ok(
        V1Success,
        v1.DELETE('/field-values/{field_value_id}', { params: { path: { field_value_id: fv.id } } }),
      ),
    ).toEqual({ success: true });
    expect(
      await ok(V1Success, v1.DELETE('/persons/{person_id}', { params: { path: { person_id: created.id } } })),
    ).toEqual({ success: true });
    const gone = await failure(
      V2Errors,
      v2.GET('/v2/persons/{personId}', { params: { path: { personId: created.id } } }),
    );
    expect(gone.status).toBe(404);
    expect(gone.body.errors[0]?.code).toBe('not-found');
  });

  it('creates an organization, lists it and deletes it; opportunities live on one list entry', async () => {
    const { sim, v1, v2 } = await start();
    const org = await ok(
      V1Organization,
      v1.POST('/organizations', { body: { name: 'Acme Corporation', domain: 'https://www.acme.co/about' } }),
    );
    expect(org).toMatchObject({
      name: 'Acme Corporation',
      domain: 'acme.co',
      domains: ['acme.co'],
      global: false,
      person_ids: [],
    });
    const renamed = await ok(
      V1Organization,
      v1.PUT('/organizations/{organization_id}', {
        params: { path: { organization_id: org.id } },
        body: { name: 'Acme Corp.' },
      }),
    );
    expect(renamed.name).toBe('Acme Corp.');
    const portfolio = sim.seed?.lists.portfolio as number;
    const entry = await ok(
      V1ListEntry,
      v1.POST('/lists/{list_id}/list-entries', {
        params: { path: { list_id: portfolio } },
        body: { entity_id: org.id },
      }),
    );
    expect(entry).toMatchObject({
      list_id: portfolio,
      entity_id: org.id,
      entity_type: 1,
      entity: { name: 'Acme Corp.' },
    });
    const pipeline = sim.seed?.lists.pipeline as number;
    const opp = await ok(
      V1Opportunity,
      v1.POST('/opportunities', {
        body: { name: 'Acme Seed', list_id: pipeline, organization_ids: [org.id] },
      }),
    );
    expect(opp.list_entries).toHaveLength(1);
    expect(opp.list_entries[0]).toMatchObject({ list_id: pipeline, entity_id: opp.id, entity_type: 8 });
    const status = sim.state.field(sim.seed?.fields.status as number);
    const won = status.dropdownOptions.find((o) => o.text === 'Won')?.id as number;
    const fv = await ok(
      V1FieldValue,
      v1.POST('/field-values', {
        body: { field_id: status.id, entity_id: opp.id, list_entry_id: opp.list_entries[0]?.id, value: won },
      }),
    );
    expect(fv.value).toEqual({ id: won, text: 'Won', rank: 3, color: 3 });
    const v2Entry = await ok(
      ListEntry,
      v2.GET('/v2/lists/{listId}/list-entries/{listEntryId}', {
        params: {
          path: { listId: pipeline, listEntryId: opp.list_entries[0]?.id as number },
          query: { fieldIds: [`field-${status.id}`] },
        },
      }),
    );
    expect(v2Entry.entity.fields?.[0]?.value).toEqual({
      type: 'ranked-dropdown',
      data: { dropdownOptionId: won, text: 'Won', rank: 3, color: null },
    });
    const renamedOpp = await ok(
      V1Opportunity,
      v1.PUT('/opportunities/{opportunity_id}', {
        params: { path: { opportunity_id: opp.id } },
        body: { name: 'Acme Seed+' },
      }),
    );
    expect(renamedOpp.name).toBe('Acme Seed+');
    await ok(
      V1Success,
      v1.DELETE('/lists/{list_id}/list-entries/{list_entry_id}', {
        params: { path: { list_id: pipeline, list_entry_id: opp.list_entries[0]?.id as number } },
      }),
    );
    const oppGone = await failure(
      V2Errors,
      v2.GET('/v2/opportunities/{opportunityId}', { params: { path: { opportunityId: opp.id } } }),
    );
    expect(oppGone.status).toBe(404);
    await ok(
      V1Success,
      v1.DELETE('/organizations/{organization_id}', { params: { path: { organization_id: org.id } } }),
    );
    const orgGone = await failure(
      V1Errors,
      v1.DELETE('/organizations/{organization_id}', { params: { path: { organization_id: org.id } } }),
    );
    expect(orgGone).toMatchObject({ status: 404, body: { errors: ['Organization not found.'] } });
  });

  it('v1 GET /fields describes the fields a writer needs (value types, list, options)', async () => {
    const { sim, v1 } = await start();
    const pipeline = sim.seed?.lists.pipeline as number;
    const fields = await ok(V1Field.array(), v1.GET('/fields', { params: { query: { list_id: pipeline } } }));
    expect(fields.map((f) => [f.name, f.value_type, f.allows_multiple])).toEqual([
      ['Status', 7, false],
      ['Amount', 3, false],
      ['Owners', 0, true],
      ['Close Date', 4, false],
    ]);
    expect(fields[0]?.dropdown_options.map((o) => o.text)).toEqual([
      'Lead',
      'Qualified',
      'Term Sheet',
      'Won',
      'Lost',
    ]);
  });

  it('surfaces the errors a connector handles: 404, validation 400/422, 401 and 429', async () => {
    const { sim, v1, v2 } = await start({ rateLimit: { perMinute: 3 } });
    const missing = await failure(
      V2Errors,
      v2.GET('/v2/companies/{companyId}', { params: { path: { companyId: 999999 } } }),
    );
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]?.code).toBe('not-found');

    const badLimit = await failure(V2Errors, v2.GET('/v2/persons', { params: { query: { limit: 500 } } }));
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.errors[0]).toMatchObject({ code: 'validation', param: 'limit' });

    const dup = await failure(
      V1Errors,
      v1.POST('/persons', { body: { first_name: 'X', last_name: 'Y', emails: ['ava.patel@northwind.io'] } }),
    );
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatch(/ava\.patel@northwind\.io/);

    const limited = await failure(V2Errors, v2.GET('/v2/lists'));
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0]?.code).toBe('rate-limit');
    expect(limited.headers.get('X-Ratelimit-Limit-User-Remaining')).toBe('0');

    const stranger = createClient<V2Paths>({ baseUrl: sim.url, headers: { Authorization: 'Bearer nope' } });
    const unauth = await failure(V2Errors, stranger.GET('/v2/lists'));
    expect(unauth.status).toBe(401);
    expect(unauth.body.errors[0]?.code).toBe('authentication');
  });
});
