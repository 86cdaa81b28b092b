import { describe, expect, it } from 'vitest';
import { canConvert, checkFieldMapping, convertValue } from './compatibility';
import type { FieldSpec } from './types';

const f = (type: FieldSpec['type'], extra: Partial<FieldSpec> = {}): FieldSpec => ({
  id: type,
  name: type,
  type,
  ...extra,
});
const conv = (v: unknown, from: FieldSpec, to: FieldSpec) => {
  const r = convertValue(v as never, from, to);
  return r.ok ? r.value : `ERR:${r.problem.code}`;
};

describe('type compatibility', () => {
  it('converts between compatible types both ways', () => {
    expect(conv('42.50', f('number'), f('currency', { options: { currencyCode: 'EUR' } }))).toEqual({
      minor: '4250',
      code: 'EUR',
    });
    expect(conv({ minor: '4250', code: 'EUR' }, f('currency'), f('number'))).toBe('42.5');
    expect(conv('2026-01-02', f('date'), f('datetime'))).toBe('2026-01-02T00:00:00.000Z');
    expect(conv('2026-01-02T22:00:00.000Z', f('datetime'), f('date'))).toBe('2026-01-02');
    expect(conv(['a', 'b'], f('multi_select'), f('text'))).toBe('a, b');
    expect(conv('b, a', f('text'), f('multi_select'))).toEqual(['a', 'b']);
    expect(conv(true, f('boolean'), f('text'))).toBe('true');
    expect(conv('yes', f('text'), f('boolean'))).toBe(true);
    expect(conv('**Bold** move', f('rich_text'), f('text'))).toBe('Bold move');
  });

  it('refuses values that do not convert, with a reason', () => {
    expect(conv('abc', f('text'), f('number'))).toBe('ERR:type_mismatch');
    expect(conv(['a', 'b'], f('multi_select'), f('single_select'))).toBe('ERR:type_mismatch');
    expect(conv('1.234', f('number'), f('currency'))).toBe('ERR:type_mismatch');
  });

  it('refuses incompatible mappings and narrows read-only ones to one way', () => {
    expect(canConvert('attachments', 'number')).toBe(false);
    const bad = checkFieldMapping(f('attachments'), f('number'), 'both');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.reason).toMatch(/cannot be mapped/);
    const formula = checkFieldMapping(f('number', { readOnly: true, name: 'Total' }), f('number'), 'both');
    expect(formula).toMatchObject({ ok: true, effectiveDirection: 'left_to_right' });
    const both = checkFieldMapping(f('text', { readOnly: true }), f('text', { readOnly: true }), 'both');
    expect(both.ok).toBe(false);
    expect(checkFieldMapping(f('relations'), f('text'), 'both').ok).toBe(false);
    expect(checkFieldMapping(f('email'), f('text'), 'both')).toMatchObject({
      ok: true,
      effectiveDirection: 'both',
    });
  });
});
