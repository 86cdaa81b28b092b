import { describe, expect, it } from 'vitest';
import { instanceUrlOf, syncedObjects } from './port';
import { csvObjects, mapSalesforceError, parseCsv, parseLimitInfo, toCsv } from './salesforce-api';
import { soqlDateTime, soqlString } from './salesforce-connector';
import {
  canonicalType,
  fromCanonical,
  isReadOnly,
  isRequired,
  type SalesforceFieldMeta,
  salesforceFields,
  toCanonical,
  toCsvCell,
} from './salesforce-values';

const field = (type: string, extra: Partial<SalesforceFieldMeta> = {}): SalesforceFieldMeta => ({
  name: 'F__c',
  label: 'F',
  type,
  nillable: true,
  createable: true,
  updateable: true,
  ...extra,
});

describe('Salesforce describe to canonical fields', () => {
  it('maps field types', () => {
    expect(canonicalType(field('picklist'))).toBe('single_select');
    expect(canonicalType(field('multipicklist'))).toBe('multi_select');
    expect(canonicalType(field('reference'))).toBe('relations');
    for (const t of ['currency', 'percent', 'double', 'int']) expect(canonicalType(field(t))).toBe('number');
    expect(canonicalType(field('email'))).toBe('email');
    expect(canonicalType(field('phone'))).toBe('phone');
    expect(canonicalType(field('url'))).toBe('url');
    expect(canonicalType(field('date'))).toBe('date');
    expect(canonicalType(field('datetime'))).toBe('datetime');
    expect(canonicalType(field('textarea'))).toBe('text');
    expect(canonicalType(field('id'))).toBeUndefined();
    expect(canonicalType(field('address'))).toBeUndefined();
  });

  it('flags calculated and non-updateable fields read-only, and required ones', () => {
    expect(isReadOnly(field('string', { calculated: true }))).toBe(true);
    expect(isReadOnly(field('datetime', { updateable: false, createable: false }))).toBe(true);
    expect(isReadOnly(field('string'))).toBe(false);
    expect(isRequired(field('string', { nillable: false }))).toBe(true);
    expect(isRequired(field('string', { nillable: false, defaultedOnCreate: true }))).toBe(false);
    expect(isRequired(field('string', { nillable: false, createable: false }))).toBe(false);
  });

  it('lists picklist values as choices and a reference with its target table', () => {
    const fields = salesforceFields({
      name: 'Contact',
      label: 'Contact',
      fields: [
        field('id', { name: 'Id', updateable: false, createable: false }),
        field('string', { name: 'LastName', label: 'Last Name', nillable: false }),
        field('picklist', {
          name: 'LeadSource',
          label: 'Lead Source',
          picklistValues: [
            { value: 'Web', label: 'Web', active: true },
            { value: 'Old', label: 'Old', active: false },
          ],
        }),
        field('reference', { name: 'AccountId', label: 'Account ID', referenceTo: ['Account'] }),
        field('string', { name: 'Name', calculated: true, updateable: false, createable: false }),
        field('address', { name: 'MailingAddress' }),
      ],
    });
    expect(fields.map((f) => f.remoteId)).toEqual(['LastName', 'LeadSource', 'AccountId', 'Name']);
    expect(fields[0]).toMatchObject({ fieldType: 'text', readOnly: false, options: { required: true } });
    expect(fields[1]?.options.choices).toEqual(['Web']);
    expect(fields[2]).toMatchObject({ fieldType: 'relations', options: { references: 'Account' } });
    expect(fields[3]?.readOnly).toBe(true);
  });
});

describe('Salesforce values both ways', () => {
  it('reads JSON and CSV values as canonical values', () => {
    expect(toCanonical(field('double'), 1.5)).toBe('1.5');
    expect(toCanonical(field('currency'), '1200.50')).toBe('1200.5');
    expect(toCanonical(field('boolean'), 'true')).toBe(true);
    expect(toCanonical(field('boolean'), null)).toBe(false);
    expect(toCanonical(field('datetime'), '2026-01-15T09:00:00.000+0000')).toBe('2026-01-15T09:00:00.000Z');
    expect(toCanonical(field('date'), '2026-01-15')).toBe('2026-01-15');
    expect(toCanonical(field('multipicklist'), 'b;a')).toEqual(['a', 'b']);
    expect(toCanonical(field('reference'), '001000000000001AAA')).toEqual(['001000000000001AAA']);
    expect(toCanonical(field('string'), '')).toBe(null);
  });

  it('writes canonical values as JSON and as Bulk API CSV cells', () => {
    expect(fromCanonical(field('double'), '1.5')).toBe(1.5);
    expect(fromCanonical(field('multipicklist'), ['a', 'b'])).toBe('a;b');
    expect(fromCanonical(field('reference'), ['001A'])).toBe('001A');
    expect(fromCanonical(field('reference'), [])).toBe(null);
    expect(fromCanonical(field('datetime'), '2026-01-15T09:00:00Z')).toBe('2026-01-15T09:00:00.000Z');
    expect(fromCanonical(field('string'), null)).toBe(null);
    expect(fromCanonical(field('boolean'), null)).toBe(false);
    expect(toCsvCell(field('string'), null)).toBe('#N/A');
    expect(toCsvCell(field('boolean'), true)).toBe('true');
    expect(toCsvCell(field('multipicklist'), ['x', 'y'])).toBe('x;y');
  });

  it('writes SOQL literals safely', () => {
    expect(soqlString("O'Brien \\ co")).toBe("'O\\'Brien \\\\ co'");
    expect(soqlDateTime(Date.UTC(2026, 0, 15, 9, 0, 0))).toBe('2026-01-15T09:00:00Z');
    expect(soqlDateTime(Date.UTC(2026, 0, 15, 9, 0, 0, 250))).toBe('2026-01-15T09:00:00.250Z');
  });

  it('reads and writes Bulk API 2.0 CSV', () => {
    const csv = toCsv(
      ['Id', 'Name'],
      [
        ['1', 'Acme, "Inc"'],
        ['2', 'line\nbreak'],
      ],
    );
    expect(parseCsv(csv)).toEqual([
      ['Id', 'Name'],
      ['1', 'Acme, "Inc"'],
      ['2', 'line\nbreak'],
    ]);
    expect(csvObjects('"sf__Id","sf__Created",Name\r\n001,true,Acme\r\n')).toEqual([
      { sf__Id: '001', sf__Created: 'true', Name: 'Acme' },
    ]);
  });
});

describe('Salesforce errors', () => {
  it('maps REST errors to codes a person can act on', () => {
    const session = mapSalesforceError(401, [
      { message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' },
    ]);
    expect(session.code).toBe('auth_invalid');
    const missing = mapSalesforceError(400, [
      {
        message: 'Required fields are missing: [LastName]',
        errorCode: 'REQUIRED_FIELD_MISSING',
        fields: ['LastName'],
      },
    ]);
    expect(missing.code).toBe('validation');
    expect(missing.userFacingMessage).toMatch(/LastName/);
    expect(mapSalesforceError(404, [{ errorCode: 'NOT_FOUND', message: 'x' }]).code).toBe('not_found');
    expect(mapSalesforceError(400, [{ errorCode: 'INVALID_REPLICATION_DATE', message: 'x' }]).code).toBe(
      'cursor_invalid',
    );
    expect(mapSalesforceError(403, [{ errorCode: 'INSUFFICIENT_ACCESS', message: 'x' }]).code).toBe(
      'permission_denied',
    );
    expect(mapSalesforceError(503, 'down').code).toBe('transient');
    expect(mapSalesforceError(400, { error: 'invalid_grant', error_description: 'expired' }).code).toBe(
      'auth_invalid',
    );
  });

  it('maps the daily allocation used up (403 REQUEST_LIMIT_EXCEEDED) to a rate limit with a long wait', () => {
    const headers = new Headers({ 'sforce-limit-info': 'api-usage=15000/15000' });
    const daily = mapSalesforceError(
      403,
      [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }],
      headers,
    );
    expect(daily.code).toBe('rate_limited');
    expect(daily.retryAfterMs).toBe(60 * 60_000);
    expect(daily.userFacingMessage).toMatch(/15000 of 15000/);
    const concurrent = mapSalesforceError(403, [
      { message: 'ConcurrentPerOrgLongTxn Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' },
    ]);
    expect(concurrent.code).toBe('rate_limited');
    expect(concurrent.retryAfterMs).toBeLessThan(60_000);
    expect(mapSalesforceError(429, null, new Headers({ 'retry-after': '2' })).retryAfterMs).toBe(2_000);
    expect(parseLimitInfo('api-usage=18/15000')).toEqual({ used: 18, max: 15000, remaining: 14982 });
  });
});

describe('Salesforce port helpers', () => {
  it("accepts Salesforce hosts, the server's login host and sandboxes as instance URLs, nothing else", () => {
    expect(instanceUrlOf({}, { instanceUrl: 'https://acme.my.salesforce.com/' })).toBe(
      'https://acme.my.salesforce.com',
    );
    expect(instanceUrlOf({ apiUrl: 'http://127.0.0.1:4000' }, { instanceUrl: 'http://127.0.0.1:4000' })).toBe(
      'http://127.0.0.1:4000',
    );
    expect(() => instanceUrlOf({}, { instanceUrl: 'http://169.254.169.254' })).toThrow(/refused/);
    expect(() => instanceUrlOf({}, { instanceUrl: 'https://evil.salesforce.com.example.net' })).toThrow();
    expect(() => instanceUrlOf({}, {})).toThrow();
  });

  it('syncs the standard four objects and the custom ones', () => {
    expect(
      syncedObjects({
        sobjects: [
          { name: 'Account' },
          { name: 'Case' },
          { name: 'Contact' },
          { name: 'Invoice__c', custom: true, queryable: true },
          { name: 'Lead' },
          { name: 'Opportunity' },
          { name: 'Setup__mdt', custom: true },
        ],
      }),
    ).toEqual(['Account', 'Contact', 'Lead', 'Opportunity', 'Invoice__c']);
  });
});
