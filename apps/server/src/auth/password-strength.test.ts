import { describe, expect, it } from 'vitest';
import { weakPasswordReason } from './password-strength';

describe('weakPasswordReason', () => {
  it('refuses common and trivially weak passwords, saying why and what to do', () => {
    for (const weak of ['password', '12345678', '        ', 'qwertyuiop', 'aaaaaaaaaaaa', 'Password1']) {
      const reason = weakPasswordReason(weak);
      expect(reason, weak).toMatch(/^This password is too easy to guess\./);
      expect(reason).toMatch(/Choose a longer password/);
    }
  });

  it("refuses a password made of the user's own email or name", () => {
    const user = ['ada.lovelace@example.com', 'Ada Lovelace'];
    for (const own of ['ada.lovelace@example.com']) {
      expect(weakPasswordReason(own), own).toBeNull();
      expect(weakPasswordReason(own, user), own).not.toBeNull();
    }
  });

  it('accepts the passwords the tests and e2e use', () => {
    for (const strong of [
      'correct-horse-battery',
      'correct-horse-42',
      'chaos-password-1',
      'bench-password-1',
    ]) {
      expect(weakPasswordReason(strong), strong).toBeNull();
    }
  });
});
