/**
 * Contract test for Airtable's create-table and create-field calls (Web API, schema.bases:write).
 * The `airtable` package has no client for the metadata API, so these calls are plain fetch, as an
 * integration without a metadata client makes them; bodies and answers follow Airtable's table and
 * field models (the first field is the primary field; types that need options must have them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AirtableSimulator, startAirtableSimulator } from './index.ts';

let sim: AirtableSimulator;
let baseId: string;
beforeAll(async () => {
  sim = await startAirtableSimulator({
    seed: { contacts: 1 },
    rateLimit: false,
    tokens: [{ token: 'patReadOnly.x', scopes: ['schema.bases:read'] }],
  });
  baseId = sim.crm?.baseId as string;
});
afterAll(async () => sim?.close());

type Field = {
  id: string;
  name: string;
  type: string;
  options?: Record<string, unknown> & { choices?: { id: string; name: string }[] };
};
type Answer = {
  id: string;
  name: string;
  primaryFieldId: string;
  fields: Field[];
  type?: string;
  error?: { type: string };
};

async function meta(path: string, body: unknown, token = sim.token) {
  const res = await fetch(`${sim.url}/v0/meta/bases/${baseId}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

describe('POST /v0/meta/bases/{baseId}/tables and .../tables/{tableId}/fields', () => {
  it('creates a table whose first field is primary, with the options each type needs', async () => {
    const { status, body } = await meta('/tables', {
      name: 'Orders',
      description: 'From the warehouse',
      fields: [
        { name: 'Order', type: 'singleLineText' },
        { name: 'Total', type: 'currency', options: { precision: 2, symbol: '€' } },
        { name: 'Paid', type: 'checkbox', options: { icon: 'check', color: 'greenBright' } },
        { name: 'Status', type: 'singleSelect', options: { choices: [{ name: 'New' }, { name: 'Sent' }] } },
        {
          name: 'Placed',
          type: 'dateTime',
          options: { dateFormat: { name: 'iso' }, timeFormat: { name: '24hour' }, timeZone: 'utc' },
        },
      ],
    });
    expect(status).toBe(200);
    expect(body.id).toMatch(/^tbl[A-Za-z0-9]{14}$/);
    expect(body.primaryFieldId).toBe(body.fields[0]?.id);
    expect(body.fields.map((f) => f.type)).toEqual([
      'singleLineText',
      'currency',
      'checkbox',
      'singleSelect',
      'dateTime',
    ]);
    expect(body.fields[3]?.options?.choices?.[0]).toMatchObject({
      id: expect.stringMatching(/^sel/),
      name: 'New',
    });
    expect(body.fields[4]?.options).toMatchObject({
      dateFormat: { name: 'iso', format: 'YYYY-MM-DD' },
      timeFormat: { name: '24hour', format: 'HH:mm' },
      timeZone: 'utc',
    });
    // The schema read lists it.
    const list = await fetch(`${sim.url}/v0/meta/bases/${baseId}/tables`, {
      headers: { authorization: `Bearer ${sim.token}` },
    });
    expect(((await list.json()) as { tables: { name: string }[] }).tables.map((t) => t.name)).toContain(
      'Orders',
    );

    const field = await meta(`/tables/${body.id}/fields`, {
      name: 'Weight',
      type: 'number',
      options: { precision: 1 },
    });
    expect(field.status).toBe(200);
    expect(field.body).toMatchObject({ id: expect.stringMatching(/^fld/), name: 'Weight', type: 'number' });
  });

  it('refuses what Airtable refuses', async () => {
    const ok = { name: 'Name', type: 'singleLineText' };
    const cases: [string, unknown, string][] = [
      ['/tables', { name: 'contacts', fields: [ok] }, 'DUPLICATE_TABLE_NAME'],
      ['/tables', { name: 'Two', fields: [ok, { ...ok, name: 'NAME' }] }, 'DUPLICATE_OR_EMPTY_FIELD_NAME'],
      [
        '/tables',
        { name: 'Three', fields: [{ name: 'n', type: 'number' }] },
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
      ],
      [
        '/tables',
        {
          name: 'Four',
          fields: [{ name: 'c', type: 'checkbox', options: { icon: 'check', color: 'greenBright' } }],
        },
        'INVALID_PRIMARY_FIELD_TYPE',
      ],
      [
        '/tables',
        {
          name: 'Five',
          fields: [ok, { name: 'd', type: 'dateTime', options: { dateFormat: { name: 'iso' } } }],
        },
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
      ],
      [
        '/tables',
        {
          name: 'Seven',
          fields: [
            ok,
            {
              name: 'd',
              type: 'dateTime',
              options: { dateFormat: { name: 'iso' }, timeFormat: { name: '24hour' } },
            },
          ],
        },
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
      ],
      [
        '/tables',
        { name: 'Eight', fields: [ok, { name: 'p', type: 'currency', options: { precision: 2 } }] },
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
      ],
      [
        '/tables',
        { name: 'Nine', fields: [ok, { name: 's', type: 'singleSelect' }] },
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
      ],
    ];
    for (const [path, body, type] of cases) {
      const r = await meta(path, body);
      expect([r.status, r.body.error?.type], JSON.stringify(body)).toEqual([422, type]);
    }
    // Without schema.bases:write the call is refused as Airtable refuses a missing scope.
    const scoped = await meta('/tables', { name: 'Six', fields: [ok] }, 'patReadOnly.x');
    expect(scoped.status).toBe(403);
  });
});
