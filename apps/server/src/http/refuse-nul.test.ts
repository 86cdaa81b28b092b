import { describe, expect, it } from 'vitest';
import { findNul } from './refuse-nul';

describe('findNul', () => {
  it('finds a NUL in nested strings and keys, and nothing elsewhere', () => {
    expect(findNul({ a: [1, { b: 'x\u0000' }] })).toEqual(['a', '1', 'b']);
    expect(findNul({ 'k\u0000': 1 })).toEqual(['k\\u0000']);
    expect(findNul('\u0000')).toEqual([]);
    expect(findNul({ a: 'fine', b: [null, 2, true], c: '\\u0000' })).toBeNull();
  });
});
