import { describe, expect, it } from 'vitest';
import { differencesFromShadow } from './in-step';
import type { TableMappingSpec } from './reconcile';
import { DEFAULT_MASS_DELETE } from './reconcile';

const mapping: TableMappingSpec = {
  id: 'm',
  direction: 'both',
  fields: [
    {
      id: 'name',
      left: { id: 'l_name', name: 'name', type: 'text' },
      right: { id: 'r_name', name: 'name', type: 'text' },
      direction: 'both',
    },
    {
      id: 'n',
      left: { id: 'l_n', name: 'n', type: 'number' },
      right: { id: 'r_n', name: 'n', type: 'number' },
      direction: 'both',
    },
  ],
  policy: {
    conflictWinner: 'left',
    conflictReview: false,
    deleteProtection: false,
    massDelete: DEFAULT_MASS_DELETE,
  },
};
// Canonical numbers are decimal strings.
const shadow = { name: { l: 'Ada', r: 'Ada' }, n: { l: '1', r: '1' } };
const L = (name: string, n: number) => ({ id: 'L1', fields: { l_name: name, l_n: n } });
const R = (name: string, n: number) => ({ id: 'R1', fields: { r_name: name, r_n: n } });

describe('differencesFromShadow', () => {
  it('finds nothing when both sides hold what was last synced', () => {
    expect(differencesFromShadow(mapping, shadow, L('Ada', 1), R('Ada ', 1))).toEqual([]);
  });
  it('names the side whose live value moved from the shadow', () => {
    expect(differencesFromShadow(mapping, shadow, L('Ada', 1), R('Ada', 2))).toEqual([
      { fieldMappingId: 'n', side: 'right', live: '2', synced: '1' },
    ]);
  });
  it('catches a shadow that claims the sides agree when they do not', () => {
    // The shadow says the right holds 2 and the left 1, as if that were in step.
    const d = differencesFromShadow(mapping, { ...shadow, n: { l: '1', r: '2' } }, L('Ada', 1), R('Ada', 2));
    expect(d).toEqual([{ fieldMappingId: 'n', side: 'right', live: '2', synced: '1' }]);
  });
  it('counts a record missing on one side as out of step in every field', () => {
    expect(differencesFromShadow(mapping, shadow, L('Ada', 1), null).map((d) => d.side)).toEqual([
      'right',
      'right',
    ]);
  });
});
