import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pkcePair, readOAuthAnswer } from './oauth';

describe('OAuth sign-in (PKCE)', () => {
  it('makes a fresh verifier and its S256 challenge (RFC 7636)', async () => {
    const a = await pkcePair();
    const b = await pkcePair();
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.challenge).toBe(createHash('sha256').update(a.verifier).digest('base64url'));
  });

  it("reads the app's answer, a code or an error such as access_denied", () => {
    expect(readOAuthAnswer('?code=abc&state=s1')).toEqual({
      code: 'abc',
      state: 's1',
      error: null,
      errorDescription: null,
    });
    expect(readOAuthAnswer('?error=access_denied&state=s1').error).toBe('access_denied');
  });
});
