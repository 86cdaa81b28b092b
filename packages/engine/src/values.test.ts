import { describe, expect, it } from 'vitest';
import { markdownFromHtml, markdownToHtml, markdownToPlainText } from './rich-text';
import type { FieldSpec } from './types';
import {
  datetimesAgreeTo,
  hashRecord,
  hashValue,
  normalizeDecimal,
  normalizeValue,
  valuesEqual,
  valuesEqualAcross,
} from './values';

const n = (type: string, raw: unknown) => {
  const r = normalizeValue(type, raw);
  if (!r.ok) throw new Error(r.problem.message);
  return r.value;
};

describe('canonical values', () => {
  it('keeps numbers exact: bigint and numeric never pass through a float', () => {
    expect(n('number', '9007199254740993')).toBe('9007199254740993');
    expect(n('number', '12345678901234567890.123456789012345678')).toBe(
      '12345678901234567890.123456789012345678',
    );
    expect(n('number', '1.50')).toBe('1.5');
    expect(n('number', '-0.000')).toBe('0');
    expect(n('number', 10n)).toBe('10');
    expect(normalizeDecimal('1e3')).toBe('1000');
    expect(normalizeValue('number', 'twelve').ok).toBe(false);
  });

  it('trims text, lower-cases emails, and treats empty as null', () => {
    expect(n('text', '  Ada  ')).toBe('Ada');
    expect(n('text', '')).toBeNull();
    expect(n('email', ' Ada@Example.COM ')).toBe('ada@example.com');
    expect(normalizeValue('email', 'not-an-email').ok).toBe(false);
    expect(n('url', 'example.com/a')).toBe('https://example.com/a');
  });

  it('treats an absent checkbox as false, as apps that omit false do', () => {
    expect(n('boolean', null)).toBe(false);
    expect(n('boolean', undefined)).toBe(false);
    expect(n('boolean', 'yes')).toBe(true);
    expect(valuesEqual(n('boolean', null), n('boolean', false))).toBe(true);
  });

  it('sorts and de-duplicates multi-selects and relations', () => {
    expect(n('multi_select', ['b', 'a', 'b', ' '])).toEqual(['a', 'b']);
    expect(n('multi_select', [])).toBeNull();
    expect(valuesEqual(n('relations', ['r2', 'r1']), n('relations', ['r1', 'r2']))).toBe(true);
  });

  it('takes a file read back under a new signed URL for the same file, and another file for a change', () => {
    const file = (url: string, filename = 'cv.pdf', size = 1234) => ({
      url,
      filename,
      size,
      type: 'application/pdf',
    });
    const before = n('attachments', [file('https://v5.airtableusercontent.com/v3/u/1/sig-a/cv.pdf')]);
    const reread = n('attachments', [file('https://v5.airtableusercontent.com/v3/u/2/sig-b/cv.pdf')]);
    expect(valuesEqual(before, reread)).toBe(true);
    expect(valuesEqual(before, n('attachments', [file('https://x.test/cv.pdf', 'cv-2.pdf')]))).toBe(false);
    expect(valuesEqual(before, n('attachments', [file('https://x.test/cv.pdf', 'cv.pdf', 99)]))).toBe(false);
    expect(valuesEqual(before, n('attachments', [file('a'), file('b', 'more.pdf')]))).toBe(false);
  });

  it('normalises dates and datetimes to UTC', () => {
    expect(n('date', '2026-03-04T23:30:00Z')).toBe('2026-03-04');
    expect(n('datetime', '2026-03-04T23:30:00+02:00')).toBe('2026-03-04T21:30:00.000Z');
    expect(n('datetime', '2026-03-04 10:00:00')).toBe('2026-03-04T10:00:00.000Z');
    expect(normalizeValue('date', 'yesterday').ok).toBe(false);
  });

  it('keeps the fraction digits of a date-time past the millisecond, with the zone applied exactly', () => {
    // PostgreSQL prints timestamptz with microseconds and a short zone, timestamp with none.
    expect(n('datetime', '2026-01-02 10:11:12.987654+00')).toBe('2026-01-02T10:11:12.987654Z');
    expect(n('datetime', '2026-01-02 10:11:12.987654+05:30')).toBe('2026-01-02T04:41:12.987654Z');
    expect(n('datetime', '2026-01-02 00:11:12.000001+05:30')).toBe('2026-01-01T18:41:12.000001Z');
    expect(n('datetime', '2026-01-01 23:59:59.999999-02')).toBe('2026-01-02T01:59:59.999999Z');
    expect(n('datetime', '2026-01-02 10:11:12.987654')).toBe('2026-01-02T10:11:12.987654Z');
    expect(n('datetime', '2026-01-02T10:11:12.9876Z')).toBe('2026-01-02T10:11:12.987600Z');
    expect(n('datetime', '2026-01-02T10:11:12.987654321Z')).toBe('2026-01-02T10:11:12.987654321Z');
    expect(n('datetime', '2026-01-02T10:11:12.9876543219Z')).toBe('2026-01-02T10:11:12.987654321Z');
    expect(normalizeValue('datetime', '2026-13-02 10:11:12.987654+00').ok).toBe(false);
  });

  it('spells a date-time with no digits past the millisecond as before, whatever its source', () => {
    const instant = '2026-01-02T10:11:12.987Z';
    expect(n('datetime', '2026-01-02 10:11:12.987000+00')).toBe(instant);
    expect(n('datetime', '2026-01-02 10:11:12.987+00')).toBe(instant);
    expect(n('datetime', '2026-01-02T10:11:12.987000000Z')).toBe(instant);
    expect(n('datetime', new Date(instant))).toBe(instant);
    expect(n('datetime', Date.parse(instant))).toBe(instant);
    expect(n('datetime', '2026-01-02 10:11:12+00')).toBe('2026-01-02T10:11:12.000Z');
    // Normalising a canonical value gives it back.
    for (const v of [instant, '2026-01-02T10:11:12.987654Z', '2026-01-02T10:11:12.987654321Z'])
      expect(n('datetime', v)).toBe(v);
  });

  it('compares date-times of two fields at the precision both hold, and a side with itself exactly', () => {
    const micro = '2026-01-02T10:11:12.987654Z';
    expect(datetimesAgreeTo(micro, '2026-01-02T10:11:12.987Z', 3)).toBe(true);
    expect(datetimesAgreeTo(micro, '2026-01-02T10:11:12.988Z', 3)).toBe(false);
    expect(datetimesAgreeTo(micro, '2026-01-02T10:11:12.987655Z', 6)).toBe(false);
    expect(datetimesAgreeTo('2026-01-02T10:11:12.999Z', '2026-01-02T10:11:13.000Z', 0)).toBe(false);

    const field = (options?: FieldSpec['options']): FieldSpec => ({
      id: 'f',
      name: 'f',
      type: 'datetime',
      options,
    });
    const app = field(); // holds milliseconds: its values show 3 digits
    const pg = field({ datetimeDigits: 6 });
    expect(valuesEqualAcross(micro, pg, '2026-01-02T10:11:12.987Z', app)).toBe(true);
    expect(valuesEqualAcross(micro, pg, '2026-01-02T10:11:12.988Z', app)).toBe(false);
    expect(valuesEqualAcross(micro, pg, '2026-01-02T10:11:12.987655Z', pg)).toBe(false);
    expect(valuesEqualAcross(micro, app, '2026-01-02T10:11:12.987655Z', app)).toBe(false);
    // A microsecond field whose value has none past the millisecond still holds microseconds.
    expect(valuesEqualAcross(micro, pg, '2026-01-02T10:11:12.987Z', pg)).toBe(false);
    expect(valuesEqual(micro, '2026-01-02T10:11:12.987Z')).toBe(false);
    expect(valuesEqualAcross('a', { ...app, type: 'text' }, 'A', { ...app, type: 'text' })).toBe(false);
  });

  it('normalises Markdown so equivalent spellings compare equal, and converts HTML', () => {
    expect(valuesEqual(n('rich_text', '*hi* there'), n('rich_text', '_hi_ there'))).toBe(true);
    expect(markdownFromHtml('<p>Hello <strong>world</strong></p><ul><li>a</li></ul>')).toBe(
      'Hello *world*\n\n- a'.replace('*world*', '**world**'),
    );
    expect(markdownToHtml('**x**')).toBe('<p><strong>x</strong></p>');
    expect(markdownToPlainText('# Title\n\nSome **bold** text')).toBe('Title\nSome bold text');
  });

  it('hashes by content, independent of key order', () => {
    expect(hashRecord({ a: '1', b: ['x'] })).toBe(hashRecord({ b: ['x'], a: '1' }));
    expect(hashValue('a')).not.toBe(hashValue('b'));
    expect(valuesEqual({ minor: '100', code: 'EUR' }, { code: 'EUR', minor: '100' })).toBe(true);
  });

  it('refuses unknown field types and values of the wrong type with a problem, not a throw', () => {
    const unknown = normalizeValue('hologram', 'x');
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.problem.code).toBe('unknown_type');
    const wrong = normalizeValue('multi_select', 'not a list');
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.problem.code).toBe('type_mismatch');
  });
});
