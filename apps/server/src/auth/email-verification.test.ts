import { describe, expect, it } from 'vitest';
import { boot } from '../boot';
import { loadConfig } from '../config';
import { emailVerificationMode, existingAccountMail, optedOutWarning } from './email-verification';

const mode = (env: Record<string, string>) => emailVerificationMode(loadConfig(env, ['node', 'server']));
const SMTP = {
  LOCKSTEP_SMTP_URL: 'smtps://user:pw@mail.example.com:465',
  LOCKSTEP_MAIL_FROM: 'Lockstep <no-reply@example.com>',
};
const on = { required: true, smtpUrl: SMTP.LOCKSTEP_SMTP_URL, from: SMTP.LOCKSTEP_MAIL_FROM };

describe('email verification mode', () => {
  it('is on in staging and production, which refuse to start without mail settings', () => {
    for (const LOCKSTEP_ENV of ['staging', 'production']) {
      expect(mode({ LOCKSTEP_ENV, ...SMTP })).toEqual(on);
      expect(() => mode({ LOCKSTEP_ENV })).toThrow(
        /Set LOCKSTEP_SMTP_URL and LOCKSTEP_MAIL_FROM when LOCKSTEP_ENV is .*which emails already have an account.*LOCKSTEP_EMAIL_VERIFICATION=off/,
      );
      expect(() => mode({ LOCKSTEP_ENV, LOCKSTEP_SMTP_URL: SMTP.LOCKSTEP_SMTP_URL })).toThrow(
        /^Set LOCKSTEP_MAIL_FROM when/,
      );
      expect(() => mode({ LOCKSTEP_ENV, LOCKSTEP_EMAIL_VERIFICATION: 'on' })).toThrow(
        /Set LOCKSTEP_SMTP_URL/,
      );
      // The labelled opt-out, which start-up then says aloud.
      const off = mode({ LOCKSTEP_ENV, LOCKSTEP_EMAIL_VERIFICATION: 'off' });
      expect(off).toEqual({ required: false, why: 'opted-out' });
      expect(optedOutWarning(off)).toMatch(/reveals which emails already have an account/);
    }
  });

  it('is off in local and test mode unless mail is set up or asked for', () => {
    for (const LOCKSTEP_ENV of ['local', 'test']) {
      expect(mode({ LOCKSTEP_ENV })).toEqual({ required: false, why: 'local' });
      expect(optedOutWarning(mode({ LOCKSTEP_ENV }))).toBeNull();
      expect(mode({ LOCKSTEP_ENV, ...SMTP })).toEqual(on);
      expect(mode({ LOCKSTEP_ENV, ...SMTP, LOCKSTEP_EMAIL_VERIFICATION: 'off' })).toEqual({
        required: false,
        why: 'opted-out',
      });
      expect(() => mode({ LOCKSTEP_ENV, LOCKSTEP_SMTP_URL: SMTP.LOCKSTEP_SMTP_URL })).toThrow(
        /Set LOCKSTEP_MAIL_FROM to send/,
      );
      expect(() => mode({ LOCKSTEP_ENV, LOCKSTEP_EMAIL_VERIFICATION: 'on' })).toThrow(
        /Set LOCKSTEP_SMTP_URL and LOCKSTEP_MAIL_FROM/,
      );
    }
    expect(mode({})).toEqual({ required: false, why: 'local' });
  });

  it('takes smtp:// and smtps:// URLs only, and never repeats one in the refusal', () => {
    expect(mode({ LOCKSTEP_SMTP_URL: 'smtp://localhost:2525', LOCKSTEP_MAIL_FROM: 'a@b.c' })).toMatchObject({
      required: true,
    });
    for (const bad of ['https://mail.example.com', 'mail.example.com:25', 'smtp://']) {
      expect(() => mode({ LOCKSTEP_SMTP_URL: bad })).toThrow(
        /LOCKSTEP_SMTP_URL: must be an smtp:\/\/ or smtps:\/\//,
      );
    }
    expect(() => mode({ LOCKSTEP_ENV: 'production', LOCKSTEP_SMTP_URL: SMTP.LOCKSTEP_SMTP_URL })).not.toThrow(
      /user:pw/,
    );
  });
});

describe('start-up', () => {
  it('is refused in production without mail settings, before anything starts', async () => {
    const config = loadConfig(
      {
        LOCKSTEP_ENV: 'production',
        DATABASE_URL: 'postgres://127.0.0.1:1/nowhere',
        LOCKSTEP_DATA_DIR: '/nonexistent',
      },
      ['node', 'server'],
    );
    await expect(boot(config, () => {})).rejects.toThrow(/^Set LOCKSTEP_SMTP_URL and LOCKSTEP_MAIL_FROM/);
  });
});

describe('the mail to a taken address', () => {
  const config = { publicUrl: 'https://sync.example.com', supportEmail: 'help@example.com' };
  it('points its owner at signing in, and at a new link while unconfirmed', () => {
    const mail = existingAccountMail({ email: 'owner@example.com', emailVerified: true }, config);
    expect(mail.to).toBe('owner@example.com');
    expect(mail.text).toMatch(/tried to create a Lockstep account with this email address/);
    expect(mail.text).toContain('https://sync.example.com/sign-in');
    expect(mail.text).toContain('help@example.com');
    expect(mail.text).not.toMatch(/not confirmed/);
    expect(existingAccountMail({ email: 'owner@example.com', emailVerified: false }, config).text).toMatch(
      /not confirmed yet: signing in sends you a new confirmation link/,
    );
  });
});
