import { describe, expect, it } from 'vitest';
import { affinityRateLimitWait, isV2, mapAffinityError } from './affinity-api';
import { nextCursorOf, packKnown, parseTable, unpackKnown, withQuery } from './affinity-connector';
import {
  type AffinityFieldMeta,
  affinityFields,
  canonicalType,
  fromCanonical,
  isReadOnly,
  toCanonical,
  v1FieldId,
  v1ValueKey,
} from './affinity-values';

const meta = (id: string, valueType: string, type = 'global'): AffinityFieldMeta => ({
  id,
  name: id,
  type,
  valueType,
});

describe('Affinity fields', () => {
  it('types fields canonically and flags what Affinity sets as read-only', () => {
    const fields = affinityFields(
      [
        meta('field-1', 'text'),
        meta('field-2', 'ranked-dropdown', 'list'),
        meta('field-3', 'company-multi'),
        meta('affinity-data-location', 'location', 'enriched'),
        meta('first-email', 'interaction', 'relationship-intelligence'),
        meta('field-4', 'formula-number'),
        meta('field-5', 'list-multi'),
      ],
      (m) => (m.id === 'field-2' ? ['Lead', 'Won'] : undefined),
    );
    const byId = new Map(fields.map((f) => [f.remoteId, f]));
    expect(byId.get('field-1')).toMatchObject({ fieldType: 'text', readOnly: false });
    expect(byId.get('field-2')).toMatchObject({
      fieldType: 'single_select',
      readOnly: false,
      options: { choices: ['Lead', 'Won'] },
    });
    expect(byId.get('field-3')).toMatchObject({
      fieldType: 'relations',
      options: { relationTarget: 'companies', multiple: true },
    });
    expect(byId.get('affinity-data-location')).toMatchObject({ fieldType: 'json', readOnly: true });
    expect(byId.get('first-email')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(byId.get('field-4')?.readOnly).toBe(true);
    // Not synced: lists an entity is on.
    expect(byId.has('field-5')).toBe(false);
    expect(canonicalType('dropdown-multi')).toBe('multi_select');
    expect(isReadOnly(meta('field-9', 'number', 'enriched'))).toBe(true);
    expect(v1FieldId('field-42')).toBe(42);
    expect(v1FieldId('affinity-data-description')).toBeNull();
  });

  it('reads v2 values canonically', () => {
    const f = (valueType: string) => ({ fieldType: canonicalType(valueType) ?? 'text' });
    expect(toCanonical(f('text'), { type: 'text', data: ' Hello ' })).toBe('Hello');
    expect(toCanonical(f('number'), { type: 'number', data: 1250.5 })).toBe('1250.5');
    expect(toCanonical(f('datetime'), { type: 'datetime', data: '2024-05-01T10:00:00Z' })).toBe(
      '2024-05-01T10:00:00.000Z',
    );
    expect(
      toCanonical(f('ranked-dropdown'), {
        type: 'ranked-dropdown',
        data: { dropdownOptionId: 7, text: 'Won', rank: 3, color: 'green' },
      }),
    ).toBe('Won');
    expect(
      toCanonical(f('dropdown-multi'), {
        type: 'dropdown-multi',
        data: [
          { dropdownOptionId: 2, text: 'SaaS' },
          { dropdownOptionId: 1, text: 'B2B' },
        ],
      }),
    ).toEqual(['B2B', 'SaaS']);
    expect(
      toCanonical(f('company-multi'), {
        type: 'company-multi',
        data: [
          { id: 30, name: 'B' },
          { id: 4, name: 'A' },
        ],
      }),
    ).toEqual(['30', '4']);
    expect(toCanonical(f('person'), { type: 'person', data: { id: 9, firstName: 'A' } })).toEqual(['9']);
    expect(
      toCanonical(f('location'), {
        type: 'location',
        data: { streetAddress: null, city: 'Paris', state: null, country: 'France', continent: 'Europe' },
      }),
    ).toEqual({ json: { city: 'Paris', continent: 'Europe', country: 'France' } });
    expect(toCanonical(f('formula-number'), { type: 'formula-number', data: { calculatedValue: 3 } })).toBe(
      '3',
    );
    expect(toCanonical(f('text'), { type: 'text', data: null })).toBeNull();
    expect(toCanonical(f('text'), null)).toBeNull();
  });

  it('writes canonical values as v1 field values, one per value, refusing what Affinity would', () => {
    expect(fromCanonical('text', 'Hi')).toEqual({ values: ['Hi'] });
    expect(fromCanonical('number', '12.5')).toEqual({ values: [12.5] });
    expect(fromCanonical('number', 'twelve').problem).toMatch(/not a number/);
    expect(fromCanonical('dropdown', 'Fintech')).toEqual({ values: ['Fintech'] });
    expect(fromCanonical('dropdown-multi', ['A', 'B'])).toEqual({ values: ['A', 'B'] });
    const options = (t: string) => ({ Lead: 1, Won: 3 })[t];
    expect(fromCanonical('ranked-dropdown', 'Won', options)).toEqual({ values: [3] });
    expect(fromCanonical('ranked-dropdown', 'Maybe', options).problem).toMatch(/not an option/);
    expect(fromCanonical('company-multi', ['4', '30'])).toEqual({ values: [4, 30] });
    expect(fromCanonical('person', ['4', '5']).problem).toMatch(/one record/);
    expect(fromCanonical('location', { json: { city: 'Paris', country: 'France' } })).toEqual({
      values: [{ street_address: null, city: 'Paris', state: null, country: 'France', continent: null }],
    });
    expect(fromCanonical('text', null)).toEqual({ values: [] });
    // What is held compares with what is to be written, whatever shape v1 returns it in.
    expect(v1ValueKey('ranked-dropdown', { id: 3, text: 'Won', rank: 2 })).toBe(
      v1ValueKey('ranked-dropdown', 3),
    );
    expect(v1ValueKey('dropdown', { id: 3, text: 'Fintech' })).toBe(v1ValueKey('dropdown', 'Fintech'));
    expect(v1ValueKey('person', { id: 9 })).toBe(v1ValueKey('person', 9));
    expect(v1ValueKey('datetime', '2024-05-01T12:00:00.000+02:00')).toBe(
      v1ValueKey('datetime', '2024-05-01T10:00:00.000Z'),
    );
  });
});

describe('Affinity API plumbing', () => {
  it('maps both versions’ errors to the SDK codes with text for people', () => {
    const v2 = mapAffinityError(422, {
      errors: [{ code: 'validation', message: 'bad value', param: 'name' }],
    });
    expect(v2.code).toBe('validation');
    expect(v2.userFacingMessage).toMatch(/name: bad value/);
    expect(mapAffinityError(401, { errors: [{ code: 'authentication', message: 'nope' }] }).code).toBe(
      'auth_invalid',
    );
    expect(mapAffinityError(403, {}).code).toBe('permission_denied');
    expect(mapAffinityError(404, { errors: ['Person not found'] }).code).toBe('not_found');
    expect(mapAffinityError(422, { errors: ['Email is already in use'] }).message).toMatch(/already in use/);
    expect(mapAffinityError(500, 'oops').code).toBe('transient');
  });

  it("waits out a 429 by Affinity's headers: the minute's reset, the month's as rate_limited", () => {
    const minute = new Headers({
      'x-ratelimit-limit-user': '900',
      'x-ratelimit-limit-user-remaining': '0',
      'x-ratelimit-limit-user-reset': '17',
      'x-ratelimit-limit-org-remaining': '5000',
    });
    expect(affinityRateLimitWait(minute)).toEqual({ wait: 17_000, monthly: false });
    const e = mapAffinityError(429, {}, minute);
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBe(17_000);
    const month = new Headers({
      'x-ratelimit-limit-user-remaining': '899',
      'x-ratelimit-limit-org-remaining': '0',
      'x-ratelimit-limit-org-reset': '86400',
    });
    const m = mapAffinityError(429, {}, month);
    expect(m.retryAfterMs).toBe(86_400_000);
    expect(m.userFacingMessage).toMatch(/monthly/);
    // Neither used up (the account's concurrency limit): Retry-After, else a second.
    expect(affinityRateLimitWait(new Headers({ 'retry-after': '3' }))).toEqual({
      wait: 3000,
      monthly: false,
    });
    expect(affinityRateLimitWait(new Headers())).toEqual({ wait: 1000, monthly: false });
  });

  it('tells v2 paths (bearer) from v1 paths (Basic auth)', () => {
    expect(isV2('/v2/persons')).toBe(true);
    expect(isV2('http://127.0.0.1:3000/v2/persons?cursor=x')).toBe(true);
    expect(isV2('/persons')).toBe(false);
    expect(isV2('/field-values')).toBe(false);
  });

  it('names tables, builds v2 queries and reads page cursors', () => {
    expect(parseTable('persons')).toEqual({ kind: 'persons' });
    expect(parseTable('list-12')).toEqual({ kind: 'list', listId: 12 });
    expect(() => parseTable('deals')).toThrow();
    expect(withQuery('/v2/persons', { ids: [1, 2], limit: 3, cursor: undefined, fieldIds: [] })).toBe(
      '/v2/persons?ids=1&ids=2&limit=3',
    );
    expect(nextCursorOf('https://api.affinity.co/v2/persons?cursor=abc&limit=2')).toBe('abc');
    expect(nextCursorOf(null)).toBeNull();
    const known = new Map([
      ['1', { h: 'aaaa', p: 1 as const }],
      ['22', { h: 'bbbb', p: 0 as const }],
    ]);
    expect(unpackKnown(packKnown(known))).toEqual(known);
  });
});
