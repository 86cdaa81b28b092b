import { describe, expect, it } from 'vitest';
import { carryOptions, type OptionFields, proposeOptionPairs } from './options';
import type { FieldSpec } from './types';

const select = (name: string, choices: string[], extra: Partial<FieldSpec['options']> = {}): FieldSpec => ({
  id: name,
  name,
  type: 'single_select',
  options: { choices, ...extra },
});
const text = (name: string): FieldSpec => ({ id: name, name, type: 'text' });
const mapping = (left: FieldSpec, right: FieldSpec, optionPairs: OptionFields['optionPairs'] = null) =>
  ({ left, right, optionPairs }) satisfies OptionFields;

describe('option pairing', () => {
  it('pairs options of the same name whatever their case and separators, each once', () => {
    expect(
      proposeOptionPairs(['lead', 'customer', 'closed_won', 'qualified'], ['Lead', 'Customer', 'Closed won']),
    ).toEqual([
      { left: 'lead', right: 'Lead' },
      { left: 'customer', right: 'Customer' },
      { left: 'closed_won', right: 'Closed won' },
    ]);
  });

  it('pairs synonyms only among the options the names left unpaired', () => {
    // "Won" and "Customer" are synonyms, but Customer pairs by name first; Lost finds Churned.
    expect(proposeOptionPairs(['Lead', 'Won', 'Lost', 'Proposal'], ['Lead', 'Customer', 'Churned'])).toEqual([
      { left: 'Lead', right: 'Lead' },
      { left: 'Won', right: 'Customer' },
      { left: 'Lost', right: 'Churned' },
    ]);
    expect(proposeOptionPairs(['Customer', 'Won'], ['Customer'])).toEqual([
      { left: 'Customer', right: 'Customer' },
    ]);
  });
});

describe('carrying options across', () => {
  const stage = select('lifecycle_stage', ['lead', 'customer']);
  const status = select('Status', ['Lead', 'Customer', 'Churned']);

  it("writes the target's own spelling of an option of the same name (Airtable refuses 'lead' next to 'Lead')", () => {
    expect(carryOptions('lead', 'left', mapping(stage, status))).toEqual({ ok: true, value: 'Lead' });
    expect(carryOptions('Customer', 'right', mapping(stage, status))).toEqual({
      ok: true,
      value: 'customer',
    });
  });

  it('follows the pairs the user chose, both ways', () => {
    const fm = mapping(text('Stage'), status, [{ left: 'Won', right: 'Customer' }]);
    expect(carryOptions('Won', 'left', fm)).toEqual({ ok: true, value: 'Customer' });
    expect(carryOptions('Customer', 'right', fm)).toEqual({ ok: true, value: 'Won' });
  });

  it('refuses, with what to do, a value a strict target has no option for', () => {
    const r = carryOptions('Proposal', 'left', mapping(text('Stage'), status));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem.code).toBe('unmapped_option');
      expect(r.problem.message).toBe(
        '"Proposal" is not an option of Status; pair it with one of Lead, Customer, Churned in the field mapping.',
      );
    }
  });

  it('lets a new option through where the app adds it on write, and into text', () => {
    const open = select('Tags', ['a'], { openChoices: true });
    expect(carryOptions('b', 'left', mapping(text('t'), open))).toEqual({ ok: true, value: 'b' });
    expect(carryOptions('Churned', 'right', mapping(text('Stage'), status))).toEqual({
      ok: true,
      value: 'Churned',
    });
  });

  it('carries every option of a multi select, sorted, and fails on any it cannot hold', () => {
    const tags: FieldSpec = {
      id: 't',
      name: 'Tags',
      type: 'multi_select',
      options: { choices: ['VIP', 'Partner'] },
    };
    const fm = mapping({ ...tags, name: 'labels', options: { choices: ['vip', 'partner', 'press'] } }, tags);
    expect(carryOptions(['vip', 'partner'], 'left', fm)).toEqual({ ok: true, value: ['Partner', 'VIP'] });
    expect(carryOptions(['vip', 'press'], 'left', fm).ok).toBe(false);
  });

  it('leaves values of fields that are not selects alone', () => {
    expect(carryOptions('anything', 'left', mapping(text('a'), text('b')))).toEqual({
      ok: true,
      value: 'anything',
    });
  });
});
