import type { Shadow } from '@lockstep/engine';
import { describe, expect, it } from 'vitest';
import { shadowFromStore, toStoredShadow } from './stored-shadow';

describe('a link shadow as stored', () => {
  const shadow: Shadow = {
    name: { l: 'Ada', r: 'Ada' },
    tags: { l: ['a', 'b'], r: ['a', 'b'] },
    score: { l: 1, r: 1.5 },
    empty: { l: null, r: null },
    // An object value that looks like an entry must not be mistaken for one.
    meta: { l: { l: 1, r: 2 } as never, r: { l: 1, r: 2 } as never },
  };

  it('keeps a value both sides agree on once, and both values where they differ', () => {
    expect(toStoredShadow(shadow)).toEqual({
      name: ['Ada'],
      tags: [['a', 'b']],
      score: { l: 1, r: 1.5 },
      empty: [null],
      meta: [{ l: 1, r: 2 }],
    });
    expect(JSON.stringify(toStoredShadow(shadow)).length).toBeLessThan(JSON.stringify(shadow).length);
  });

  it('reads either form back as the engine shadow, through JSON as the database returns it', () => {
    expect(shadowFromStore(JSON.parse(JSON.stringify(toStoredShadow(shadow))))).toEqual(shadow);
    expect(shadowFromStore(shadow)).toEqual(shadow);
  });

  it('reads a link without a shadow as none', () => {
    expect(shadowFromStore({})).toBeNull();
    expect(shadowFromStore(null)).toBeNull();
  });
});
