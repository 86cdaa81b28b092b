import { describe, expect, it } from 'vitest';
import { renamedNote } from './schema-names';

describe('renamedNote', () => {
  it('lists the names an app changed, as asked → made, and nothing when none changed', () => {
    expect(renamedNote([{ name: 'contacts 2', renamedFrom: 'contacts' }, { name: 'email' }])).toBe(
      ' Renamed: contacts → contacts 2.',
    );
    expect(renamedNote([{ name: 'email' }, { name: 'x', renamedFrom: 'x' }])).toBe('');
  });
});
