import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from './secret-box';

describe('secret box (AES-256-GCM)', () => {
  const box = createSecretBox(randomBytes(32).toString('base64'));

  it('round-trips a value, with a fresh IV every time', () => {
    const secret = { password: 'hunter2', nested: { token: 'abc' } };
    const a = box.seal(secret);
    const b = box.seal(secret);
    expect(a).not.toEqual(b);
    expect(a).not.toContain('hunter2');
    expect(box.open(a)).toEqual(secret);
  });

  it('refuses a tampered ciphertext and a wrong key', () => {
    const sealed = box.seal({ password: 'hunter2' });
    const parts = sealed.split('.');
    const data = Buffer.from(parts[3] as string, 'base64url');
    data[0] = (data[0] ?? 0) ^ 1;
    parts[3] = data.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    const other = createSecretBox(randomBytes(32).toString('base64'));
    expect(() => other.open(sealed)).toThrow();
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => createSecretBox(Buffer.from('short').toString('base64'))).toThrow(/32 bytes/);
  });
});
