import { describe, expect, it } from 'vitest';
import { attioRetryAfterMs, isAttioRead, mapAttioError } from './attio-api';
import { fingerprint, packKnown, unpackKnown } from './attio-connector';
import {
  type AttioAttribute,
  type AttioValue,
  attioFields,
  canonicalType,
  fromCanonical,
  isReadOnly,
  splitFullName,
  toCanonical,
} from './attio-values';

const attr = (over: Partial<AttioAttribute> & Pick<AttioAttribute, 'api_slug' | 'type'>): AttioAttribute => ({
  id: { attribute_id: `attr-${over.api_slug}` },
  title: over.api_slug,
  is_writable: true,
  is_multiselect: false,
  ...over,
});

const active = (v: Record<string, unknown>): AttioValue => ({
  active_from: '2024-01-01T00:00:00.000000000Z',
  active_until: null,
  ...v,
});
const historic = (v: Record<string, unknown>): AttioValue => ({
  active_from: '2023-01-01T00:00:00.000000000Z',
  active_until: '2024-01-01T00:00:00.000000000Z',
  ...v,
});

const read = (a: AttioAttribute, values: AttioValue[], part?: 'first_name' | 'last_name') =>
  toCanonical({ attribute: a, fieldType: canonicalType(a) ?? 'text', ...(part ? { part } : {}) }, values);

describe('Attio values -> canonical', () => {
  it('reads only the active value, never a historic one', () => {
    const a = attr({ api_slug: 'job_title', type: 'text' });
    expect(read(a, [historic({ value: 'Old title' }), active({ value: ' New title ' })])).toBe('New title');
    expect(read(a, [historic({ value: 'Old title' })])).toBeNull();
    expect(read(a, [])).toBeNull();
  });

  it('reads a person name as its full name and its parts', () => {
    const a = attr({ api_slug: 'name', type: 'personal-name' });
    const v = [active({ first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace' })];
    expect(read(a, v)).toBe('Ada Lovelace');
    expect(read(a, v, 'first_name')).toBe('Ada');
    expect(read(a, v, 'last_name')).toBe('Lovelace');
    const fields = attioFields([a]).map((f) => f.remoteId);
    expect(fields).toEqual(['name', 'name.first_name', 'name.last_name']);
  });

  it('reads the primary (first) of several email addresses, lower-cased', () => {
    const a = attr({
      api_slug: 'email_addresses',
      type: 'email-address',
      is_multiselect: true,
      is_unique: true,
    });
    expect(
      read(a, [active({ email_address: 'Ada@Example.com' }), active({ email_address: 'ada@work.example' })]),
    ).toBe('ada@example.com');
  });

  it('reads select and status options as titles, multiselects as sorted lists', () => {
    const single = attr({ api_slug: 'tier', type: 'select' });
    const multi = attr({ api_slug: 'tags', type: 'select', is_multiselect: true });
    const status = attr({ api_slug: 'stage', type: 'status' });
    const option = (title: string) => ({ id: { option_id: `opt-${title}` }, title, is_archived: false });
    expect(read(single, [active({ option: option('Gold') })])).toBe('Gold');
    expect(read(multi, [active({ option: option('b') }), active({ option: option('a') })])).toEqual([
      'a',
      'b',
    ]);
    expect(read(status, [active({ status: { id: { status_id: 's1' }, title: 'Won' } })])).toBe('Won');
    // A bare option id is turned into its title when the titles are known.
    expect(
      toCanonical({ attribute: single, fieldType: 'single_select' }, [active({ option: 'opt-9' })], (id) =>
        id === 'opt-9' ? 'Silver' : undefined,
      ),
    ).toBe('Silver');
  });

  it('reads currency in minor units with its code, timestamps to canonical ISO, dates, numbers, checkboxes', () => {
    const money = attr({
      api_slug: 'value',
      type: 'currency',
      config: { currency: { default_currency_code: 'EUR' } },
    });
    expect(read(money, [active({ currency_value: 1234.5, currency_code: 'EUR' })])).toEqual({
      minor: '123450',
      code: 'EUR',
    });
    expect(read(money, [active({ currency_value: 500, currency_code: 'JPY' })])).toEqual({
      minor: '500',
      code: 'JPY',
    });
    const ts = attr({ api_slug: 'closed_at', type: 'timestamp' });
    expect(read(ts, [active({ value: '2023-01-02T13:00:00.000000000Z' })])).toBe('2023-01-02T13:00:00.000Z');
    expect(read(attr({ api_slug: 'd', type: 'date' }), [active({ value: '2023-01-02' })])).toBe('2023-01-02');
    expect(read(attr({ api_slug: 'n', type: 'number' }), [active({ value: 42.5 })])).toBe('42.5');
    expect(read(attr({ api_slug: 'c', type: 'checkbox' }), [])).toBe(false);
    expect(read(attr({ api_slug: 'c', type: 'checkbox' }), [active({ value: true })])).toBe(true);
  });

  it('reads record references as relation ids', () => {
    const a = attr({
      api_slug: 'company',
      type: 'record-reference',
      config: { record_reference: { allowed_object_ids: ['obj-companies'] } },
    });
    expect(
      read(a, [
        active({ target_object: 'companies', target_record_id: 'r2' }),
        active({ target_object: 'companies', target_record_id: 'r1' }),
      ]),
    ).toEqual(['r1', 'r2']);
  });

  it('flags read-only attributes: not writable, interactions, actors, references to several objects', () => {
    expect(isReadOnly(attr({ api_slug: 'record_id', type: 'text', is_writable: false }))).toBe(true);
    expect(isReadOnly(attr({ api_slug: 'created_by', type: 'actor-reference' }))).toBe(true);
    expect(isReadOnly(attr({ api_slug: 'last_interaction', type: 'interaction' }))).toBe(true);
    expect(
      isReadOnly(
        attr({
          api_slug: 'any',
          type: 'record-reference',
          config: { record_reference: { allowed_object_ids: [] } },
        }),
      ),
    ).toBe(true);
    expect(isReadOnly(attr({ api_slug: 'job_title', type: 'text' }))).toBe(false);
    const fields = attioFields([attr({ api_slug: 'created_at', type: 'timestamp', is_writable: false })]);
    expect(fields[0]).toMatchObject({ remoteId: 'created_at', fieldType: 'datetime', readOnly: true });
  });
});

describe('canonical -> Attio input values', () => {
  it('writes a new primary email first and keeps the other addresses, without repeating one', () => {
    const a = attr({ api_slug: 'email_addresses', type: 'email-address', is_multiselect: true });
    const current = [
      active({ email_address: 'old@example.com' }),
      active({ email_address: 'second@example.com' }),
    ];
    expect(fromCanonical(a, { whole: 'new@example.com', has: true }, current)).toEqual([
      { email_address: 'new@example.com' },
      { email_address: 'second@example.com' },
    ]);
    // Promoting the secondary does not list it twice.
    expect(fromCanonical(a, { whole: 'second@example.com', has: true }, current)).toEqual([
      { email_address: 'second@example.com' },
    ]);
    expect(fromCanonical(a, { whole: null, has: true }, current)).toEqual([
      { email_address: 'second@example.com' },
    ]);
    expect(fromCanonical(a, { whole: 'x@example.com', has: true }, undefined)).toEqual([
      { email_address: 'x@example.com' },
    ]);
  });

  it('writes a name from its full text or its parts, keeping the part not given', () => {
    const a = attr({ api_slug: 'name', type: 'personal-name' });
    expect(splitFullName('Ada King Lovelace')).toEqual({ first_name: 'Ada', last_name: 'King Lovelace' });
    expect(fromCanonical(a, { whole: 'Grace Hopper', has: true }, undefined)).toEqual([
      { first_name: 'Grace', last_name: 'Hopper', full_name: 'Grace Hopper' },
    ]);
    const current = [active({ first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace' })];
    expect(fromCanonical(a, { last_name: 'Byron', has: true }, current)).toEqual([
      { first_name: 'Ada', last_name: 'Byron', full_name: 'Ada Byron' },
    ]);
    expect(fromCanonical(a, { whole: null, has: true }, undefined)).toEqual([]);
  });

  it('writes selects and statuses by title, multiselects as whole lists, references with their object', () => {
    expect(fromCanonical(attr({ api_slug: 't', type: 'select' }), { whole: 'Gold', has: true }, [])).toEqual([
      { option: 'Gold' },
    ]);
    expect(
      fromCanonical(
        attr({ api_slug: 't', type: 'select', is_multiselect: true }),
        { whole: ['a', 'b'], has: true },
        [],
      ),
    ).toEqual([{ option: 'a' }, { option: 'b' }]);
    expect(fromCanonical(attr({ api_slug: 's', type: 'status' }), { whole: 'Won', has: true }, [])).toEqual([
      { status: 'Won' },
    ]);
    const ref = attr({
      api_slug: 'company',
      type: 'record-reference',
      config: { record_reference: { allowed_object_ids: ['obj-companies'] } },
    });
    expect(fromCanonical(ref, { whole: ['r1'], has: true }, [])).toEqual([
      { target_object: 'obj-companies', target_record_id: 'r1' },
    ]);
  });

  it('writes currency in major units, numbers, checkboxes, dates, and clears with an empty list', () => {
    const money = attr({
      api_slug: 'value',
      type: 'currency',
      config: { currency: { default_currency_code: 'USD' } },
    });
    expect(fromCanonical(money, { whole: { minor: '123450', code: 'USD' }, has: true }, [])).toEqual([
      { currency_value: 1234.5 },
    ]);
    expect(fromCanonical(attr({ api_slug: 'n', type: 'number' }), { whole: '42.5', has: true }, [])).toEqual([
      { value: 42.5 },
    ]);
    expect(fromCanonical(attr({ api_slug: 'c', type: 'checkbox' }), { whole: false, has: true }, [])).toEqual(
      [{ value: false }],
    );
    expect(
      fromCanonical(attr({ api_slug: 'd', type: 'date' }), { whole: '2024-02-29', has: true }, []),
    ).toEqual([{ value: '2024-02-29' }]);
    expect(fromCanonical(attr({ api_slug: 'x', type: 'text' }), { whole: null, has: true }, [])).toEqual([]);
  });
});

describe('Attio API helpers', () => {
  it("waits out a 429 until its Retry-After date by the server's own clock", () => {
    const headers = new Headers({
      'retry-after': 'Tue, 23 May 2023 14:42:01 GMT',
      date: 'Tue, 23 May 2023 14:42:00 GMT',
    });
    // The local clock is an hour off: the server's Date header decides.
    expect(attioRetryAfterMs(headers, Date.parse('2023-05-23T15:42:00Z'))).toBe(1000);
    const noDate = new Headers({ 'retry-after': 'Tue, 23 May 2023 14:42:01 GMT' });
    expect(attioRetryAfterMs(noDate, Date.parse('2023-05-23T14:42:00.500Z'))).toBe(500);
    expect(attioRetryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(attioRetryAfterMs(new Headers())).toBe(1000);
  });

  it('maps Attio error bodies to connector codes with text for people', () => {
    const rl = mapAttioError(
      429,
      { status_code: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'slow down' },
      new Headers({ 'retry-after': 'Tue, 23 May 2023 14:42:02 GMT', date: 'Tue, 23 May 2023 14:42:00 GMT' }),
    );
    expect(rl.code).toBe('rate_limited');
    expect(rl.retryAfterMs).toBe(2000);
    expect(mapAttioError(401, { type: 'auth_error', code: 'unauthorized', message: 'bad key' }).code).toBe(
      'auth_invalid',
    );
    // A 403 names a scope the key lacks (type auth_error too): not a refused key.
    const scope = mapAttioError(403, {
      type: 'auth_error',
      code: 'unauthorized',
      message: 'needs webhook:read-write',
    });
    expect(scope.code).toBe('permission_denied');
    expect(scope.userFacingMessage).toMatch(/webhook:read-write/);
    const bad = mapAttioError(400, {
      type: 'invalid_request_error',
      code: 'value_not_found',
      message: 'no option',
    });
    expect(bad.code).toBe('validation');
    expect(bad.userFacingMessage).toContain('no option');
    expect(mapAttioError(409, { code: 'uniqueness_conflict', message: 'email taken' }).code).toBe(
      'validation',
    );
    expect(mapAttioError(404, { code: 'not_found' }).code).toBe('not_found');
    expect(mapAttioError(502, 'Bad gateway').code).toBe('transient');
  });

  it('counts queries as reads and record changes as writes', () => {
    expect(isAttioRead({ method: 'POST', path: '/v2/objects/people/records/query' })).toBe(true);
    expect(isAttioRead({ method: 'GET', path: '/v2/objects' })).toBe(true);
    expect(isAttioRead({ method: 'PUT', path: '/v2/objects/people/records' })).toBe(false);
    expect(isAttioRead({ method: 'POST', path: '/v2/objects/people/records' })).toBe(false);
  });

  it('packs the cursor map of ids, hashes and pass parity losslessly', () => {
    const known = new Map([
      [
        '0b5e6f1a-0000-4000-8000-000000000001',
        { h: fingerprint({ id: 'a', fields: { x: 1 } }), p: 1 as const },
      ],
      [
        '0b5e6f1a-0000-4000-8000-000000000002',
        { h: fingerprint({ id: 'b', fields: { x: 2 } }), p: 0 as const },
      ],
    ]);
    expect(unpackKnown(packKnown(known))).toEqual(known);
    expect(unpackKnown('')).toEqual(new Map());
  });
});
