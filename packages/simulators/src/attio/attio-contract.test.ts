/**
 * Contract test: attio-ts-sdk, a client generated from Attio's OpenAPI document whose every
 * response goes through the document's zod schemas, drives the simulator. A response of the
 * wrong shape fails the call (see the first test), so these tests hold the simulator to the
 * published contract; the assertions check the parsed results.
 */
import {
  AttioError,
  createAttioClient,
  deleteV2ObjectsByObjectRecordsByRecordId,
  deleteV2WebhooksByWebhookId,
  getV2ByTargetByIdentifierAttributes,
  getV2ByTargetByIdentifierAttributesByAttributeOptions,
  getV2Lists,
  getV2Objects,
  getV2ObjectsByObject,
  getV2ObjectsByObjectRecordsByRecordId,
  getV2Self,
  getV2Webhooks,
  patchV2ListsByListEntriesByEntryId,
  patchV2ObjectsByObjectRecordsByRecordId,
  postV2ListsByListEntries,
  postV2ListsByListEntriesQuery,
  postV2ObjectsByObjectRecords,
  postV2ObjectsByObjectRecordsQuery,
  postV2Webhooks,
  putV2ObjectsByObjectRecords,
  putV2ObjectsByObjectRecordsByRecordId,
} from 'attio-ts-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { type AttioSimulator, type StartAttioSimulatorOptions, startAttioSimulator } from './index.ts';

const started: AttioSimulator[] = [];

async function start(options: StartAttioSimulatorOptions = {}) {
  const sim = await startAttioSimulator({
    rateLimit: false,
    idSeed: 11,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  const client = createAttioClient({ baseUrl: sim.url, apiKey: sim.token, retry: { maxRetries: 0 } });
  return { sim, client };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

/** The parsed body of a call that succeeded (the client throws otherwise). */
async function ok<T>(p: Promise<{ data?: T }>): Promise<T> {
  const { data } = await p;
  if (data === undefined) throw new Error('expected a response body');
  return data;
}

/** The error a call threw (the client throws on every non-2xx and on a schema mismatch). */
async function failure(p: Promise<unknown>): Promise<AttioError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AttioError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

type Value = Record<string, unknown>;
const firstOf = (list: unknown[] | undefined): Value => (list?.[0] ?? {}) as Value;
const values = (data: { values: Record<string, unknown> }, slug: string) =>
  (data.values[slug] ?? []) as Value[];

describe('Attio simulator through attio-ts-sdk (generated from the OpenAPI document)', () => {
  it('the client rejects a response that does not match the schema (the contract has teeth)', async () => {
    const { sim, client } = await start();
    sim.faults.next({ path: '/v2/objects', status: 200, body: { data: [{ api_slug: 'people' }] } });
    const err = await failure(getV2Objects({ client }));
    const issues = JSON.parse(err.message) as { path: (string | number)[]; code: string }[];
    expect(issues).toContainEqual(expect.objectContaining({ path: ['data', 0, 'id'], code: 'invalid_type' }));
  });

  it('lists objects, one object, attributes and select options', async () => {
    const { client } = await start();
    const objects = (await ok(getV2Objects({ client }))).data;
    expect(objects.map((o) => o.api_slug)).toEqual(['companies', 'people', 'deals', 'projects']);

    const deals = (await ok(getV2ObjectsByObject({ client, path: { object: 'deals' } }))).data;
    expect(deals).toMatchObject({ api_slug: 'deals', singular_noun: 'Deal', plural_noun: 'Deals' });

    const attrs = (
      await ok(
        getV2ByTargetByIdentifierAttributes({ client, path: { target: 'objects', identifier: 'people' } }),
      )
    ).data;
    const bySlug = new Map(attrs.map((a) => [a.api_slug, a]));
    expect(bySlug.get('email_addresses')).toMatchObject({
      type: 'email-address',
      is_multiselect: true,
      is_unique: true,
      is_writable: true,
    });
    expect(bySlug.get('created_at')).toMatchObject({
      type: 'timestamp',
      is_system_attribute: true,
      is_writable: false,
    });
    expect(bySlug.get('company')?.config.record_reference.allowed_object_ids).toEqual([
      objects[0]?.id.object_id,
    ]);
    expect(bySlug.get('first_email_interaction')?.type).toBe('interaction');

    const options = (
      await ok(
        getV2ByTargetByIdentifierAttributesByAttributeOptions({
          client,
          path: { target: 'objects', identifier: 'companies', attribute: 'categories' },
        }),
      )
    ).data;
    expect(options.map((o) => o.title)).toContain('SaaS');
    expect(options[0]?.id.option_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('pages through records with limit and offset to the end, and gets one by id', async () => {
    const { sim, client } = await start();
    const seen: string[] = [];
    for (let offset = 0; ; offset += 7) {
      const page = (
        await ok(
          postV2ObjectsByObjectRecordsQuery({
            client,
            path: { object: 'people' },
            body: { limit: 7, offset },
          }),
        )
      ).data;
      seen.push(...page.map((r) => r.id.record_id));
      if (page.length < 7) break;
    }
    expect(seen).toHaveLength(30);
    expect(new Set(seen)).toEqual(new Set(sim.seed?.people));

    const id = sim.seed?.people[0] ?? '';
    const one = (
      await ok(getV2ObjectsByObjectRecordsByRecordId({ client, path: { object: 'people', record_id: id } }))
    ).data;
    expect(one.id.record_id).toBe(id);
    expect(values(one, 'name')[0]).toMatchObject({
      attribute_type: 'personal-name',
      full_name: 'Ada Moreau',
    });
    expect(values(one, 'email_addresses')[0]).toMatchObject({
      email_address: 'ada.moreau@acme-analytics.com',
      active_until: null,
    });
    expect(values(one, 'company')[0]).toMatchObject({
      target_object: 'companies',
      target_record_id: sim.seed?.companies[0],
    });
  });

  it('filters and sorts records', async () => {
    const { sim, client } = await start();
    const won = (
      await ok(
        postV2ObjectsByObjectRecordsQuery({
          client,
          path: { object: 'deals' },
          body: { filter: { stage: 'Won 🎉' } },
        }),
      )
    ).data;
    expect(won).toHaveLength(2);
    expect(won.every((d) => (firstOf(values(d, 'stage')).status as Value).title === 'Won 🎉')).toBe(true);

    const big = (
      await ok(
        postV2ObjectsByObjectRecordsQuery({
          client,
          path: { object: 'deals' },
          body: {
            filter: { value: { $gte: 30000 } },
            sorts: [{ attribute: 'value', direction: 'desc' }],
          },
        }),
      )
    ).data;
    expect(big.map((d) => values(d, 'value')[0]?.currency_value)).toEqual([40000, 35000, 30000]);

    const atAcme = (
      await ok(
        postV2ObjectsByObjectRecordsQuery({
          client,
          path: { object: 'people' },
          body: { filter: { company: { target_record_id: { $eq: sim.seed?.companies[0] } } } },
        }),
      )
    ).data;
    expect(atAcme).toHaveLength(3);
  });

  it('create, assert (upsert), PATCH (appends to multiselect), PUT (overwrites) and delete', async () => {
    const { client } = await start();
    const created = (
      await ok(
        postV2ObjectsByObjectRecords({
          client,
          path: { object: 'people' },
          body: {
            data: {
              values: {
                name: [{ first_name: 'Lin', last_name: 'Park', full_name: 'Lin Park' }],
                email_addresses: ['lin@park.example'],
                job_title: ['Founder'],
              },
            },
          },
        }),
      )
    ).data;
    const id = created.id.record_id;
    expect(values(created, 'job_title')[0]?.value).toBe('Founder');
    expect(values(created, 'created_by')[0]).toMatchObject({ referenced_actor_type: 'api-token' });

    // Assert on the unique email: the same record, updated.
    const asserted = (
      await ok(
        putV2ObjectsByObjectRecords({
          client,
          path: { object: 'people' },
          query: { matching_attribute: 'email_addresses' },
          body: { data: { values: { email_addresses: ['lin@park.example'], job_title: ['CEO'] } } },
        }),
      )
    ).data;
    expect(asserted.id.record_id).toBe(id);
    expect(values(asserted, 'job_title').map((v) => v.value)).toEqual(['CEO']);

    // Assert with a new email: a new record.
    const other = (
      await ok(
        putV2ObjectsByObjectRecords({
          client,
          path: { object: 'people' },
          query: { matching_attribute: 'email_addresses' },
          body: { data: { values: { email_addresses: ['kim@park.example'] } } },
        }),
      )
    ).data;
    expect(other.id.record_id).not.toBe(id);

    const patched = (
      await ok(
        patchV2ObjectsByObjectRecordsByRecordId({
          client,
          path: { object: 'people', record_id: id },
          body: { data: { values: { email_addresses: ['lin.park@work.example'] } } },
        }),
      )
    ).data;
    expect(values(patched, 'email_addresses').map((v) => v.email_address)).toEqual([
      'lin.park@work.example',
      'lin@park.example',
    ]);

    const put = (
      await ok(
        putV2ObjectsByObjectRecordsByRecordId({
          client,
          path: { object: 'people', record_id: id },
          body: { data: { values: { email_addresses: ['only@park.example'] } } },
        }),
      )
    ).data;
    expect(values(put, 'email_addresses').map((v) => v.email_address)).toEqual(['only@park.example']);
    expect(values(put, 'job_title').map((v) => v.value)).toEqual(['CEO']);

    const deleted = await ok(
      deleteV2ObjectsByObjectRecordsByRecordId({
        client,
        path: { object: 'people', record_id: id },
      }),
    );
    expect(deleted).toEqual({});
    const gone = await failure(
      getV2ObjectsByObjectRecordsByRecordId({ client, path: { object: 'people', record_id: id } }),
    );
    expect(gone.status).toBe(404);
    expect(gone.code).toBe('not_found');
  });

  it('lists, entry query, create and update an entry', async () => {
    const { sim, client } = await start();
    const lists = (await ok(getV2Lists({ client }))).data;
    expect(lists).toHaveLength(1);
    expect(lists[0]).toMatchObject({ api_slug: 'sales_pipeline', parent_object: ['companies'] });

    const entries = (
      await ok(
        postV2ListsByListEntriesQuery({
          client,
          path: { list: 'sales_pipeline' },
          body: { filter: { stage: 'Prospect' } },
        }),
      )
    ).data;
    expect(entries).toHaveLength(2);
    expect(entries[0]?.parent_object).toBe('companies');

    const company = sim.seed?.companies[9] ?? '';
    const entry = (
      await ok(
        postV2ListsByListEntries({
          client,
          path: { list: 'sales_pipeline' },
          body: {
            data: {
              parent_record_id: company,
              parent_object: 'companies',
              entry_values: { stage: ['Prospect'], priority: ['High'] },
            },
          },
        }),
      )
    ).data;
    expect(entry.parent_record_id).toBe(company);
    expect((firstOf(entry.entry_values.priority).option as Value).title).toBe('High');

    const updated = (
      await ok(
        patchV2ListsByListEntriesByEntryId({
          client,
          path: { list: 'sales_pipeline', entry_id: entry.id.entry_id },
          body: { data: { entry_values: { stage: ['Negotiation'], next_step: ['Send contract'] } } },
        }),
      )
    ).data;
    expect((firstOf(updated.entry_values.stage).status as Value).title).toBe('Negotiation');
    expect(firstOf(updated.entry_values.next_step).value).toBe('Send contract');
  });

  it('creates and lists webhooks; the secret comes back once', async () => {
    const { client } = await start();
    const created = (
      await ok(
        postV2Webhooks({
          client,
          body: {
            data: {
              target_url: 'https://hooks.example/attio',
              subscriptions: [
                {
                  event_type: 'record.updated',
                  filter: { $and: [{ field: 'id.attribute_id', operator: 'equals', value: 'x' }] },
                },
                { event_type: 'record.created', filter: null },
              ],
            },
          },
        }),
      )
    ).data;
    expect(created.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(created.status).toBe('active');
    const listed = (await ok(getV2Webhooks({ client }))).data;
    expect(listed.map((w) => w.id.webhook_id)).toEqual([created.id.webhook_id]);
    expect('secret' in (listed[0] ?? {})).toBe(false);
    await ok(deleteV2WebhooksByWebhookId({ client, path: { webhook_id: created.id.webhook_id } }));
    expect((await ok(getV2Webhooks({ client }))).data).toEqual([]);
  });

  it('introspects the token with /v2/self', async () => {
    const { sim, client } = await start();
    const self = await ok(getV2Self({ client }));
    expect(self).toMatchObject({
      active: true,
      workspace_id: sim.state.workspace.id,
      workspace_slug: 'lockstep-demo',
    });
    if (!('scope' in self)) throw new Error('expected an active token');
    expect(self.scope.split(' ')).toContain('record_permission:read-write');
  });

  it('errors surface as the client errors with the right status: 404, 400 validation, 400 uniqueness, 429', async () => {
    // Three reads a second: the 404 and two lists pass, the fourth read is refused.
    const { sim, client } = await start({ rateLimit: { readsPerSecond: 3 } });
    const missing = await failure(getV2ObjectsByObject({ client, path: { object: 'tickets' } }));
    expect(missing).toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'Object with slug/ID "tickets" not found.',
    });

    const bad = await failure(
      postV2ObjectsByObjectRecords({
        client,
        path: { object: 'deals' },
        body: { data: { values: { name: ['No stage'] } } },
      }),
    );
    expect(bad).toMatchObject({ status: 400, code: 'missing_value' });

    const badOption = await failure(
      postV2ObjectsByObjectRecords({
        client,
        path: { object: 'companies' },
        body: { data: { values: { name: ['X'], categories: ['Nope'] } } },
      }),
    );
    expect(badOption).toMatchObject({ status: 400, code: 'value_not_found' });

    const dup = await failure(
      postV2ObjectsByObjectRecords({
        client,
        path: { object: 'companies' },
        body: { data: { values: { name: ['Copy'], domains: ['acme-analytics.com'] } } },
      }),
    );
    expect(dup).toMatchObject({ status: 400, code: 'uniqueness_conflict' });

    await ok(getV2Objects({ client }));
    await ok(getV2Objects({ client }));
    // With retries off the client reports the 429 as the cause of its exhausted retries.
    const limited = await failure(getV2Objects({ client }));
    expect(limited.name).toBe('AttioRetryError');
    expect(limited.cause).toMatchObject({ name: 'AttioApiError', status: 429, code: 'rate_limit_exceeded' });
    (sim.clock as ManualClock).advance(1000);
    expect((await ok(getV2Objects({ client }))).data).toHaveLength(4);
  });
});
