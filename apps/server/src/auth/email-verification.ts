import type { Config } from '../config';
import type { Mailer } from './mailer';

/**
 * Whether new accounts confirm their email address before they can sign in. When they do, sign-up
 * answers the same for a new and a taken address (better-auth's generic answer: token null, no
 * session), so it no longer tells anyone which emails have accounts.
 */
export type EmailVerification =
  | { required: true; smtpUrl: string; from: string }
  | { required: false; why: 'local' | 'opted-out' };

/** How long a confirmation link works; signing in with the right password sends a new one. */
export const VERIFICATION_LINK_SECONDS = 60 * 60;

/**
 * Staging and production verify, and refuse to start without mail settings unless
 * LOCKSTEP_EMAIL_VERIFICATION=off says otherwise. Local and test mode (one person's machine) sign
 * up at once unless LOCKSTEP_SMTP_URL is set (or LOCKSTEP_EMAIL_VERIFICATION=on).
 */
export function emailVerificationMode(config: Config): EmailVerification {
  const { smtpUrl, from, verification } = config.mail;
  if (verification === 'off') return { required: false, why: 'opted-out' };
  const local = config.environment === 'local' || config.environment === 'test';
  if (local && !smtpUrl && verification !== 'on') return { required: false, why: 'local' };
  if (smtpUrl && from) return { required: true, smtpUrl, from };
  const missing = [smtpUrl ? null : 'LOCKSTEP_SMTP_URL', from ? null : 'LOCKSTEP_MAIL_FROM']
    .filter(Boolean)
    .join(' and ');
  const why = local
    ? 'to send the email confirmation links'
    : `when LOCKSTEP_ENV is ${config.environment}: new accounts confirm their email address, so that sign-up does not tell anyone which emails already have an account`;
  throw new Error(
    `Set ${missing} ${why}. To do without (sign-up then signs in at once and reveals which emails are taken), set LOCKSTEP_EMAIL_VERIFICATION=off.`,
  );
}

/** The line a server that opted out logs at start-up, so the choice stays visible. */
export function optedOutWarning(verification: EmailVerification): string | null {
  if (verification.required || verification.why !== 'opted-out') return null;
  return 'LOCKSTEP_EMAIL_VERIFICATION=off: sign-up signs in at once and reveals which emails already have an account.';
}

/** better-auth's settings for verified sign-up: the confirmation mail, and a note to a taken address's owner. */
export function verifiedSignUpOptions(mailer: Mailer, config: Pick<Config, 'publicUrl' | 'supportEmail'>) {
  return {
    emailAndPassword: {
      requireEmailVerification: true,
      // The owner learns of the attempt; whoever tried learns nothing (the answer is the same).
      onExistingUserSignUp: async ({ user }: { user: { email: string; emailVerified: boolean } }) => {
        await mailer.send(existingAccountMail(user, config));
      },
    },
    emailVerification: {
      sendOnSignUp: true,
      // A lost or expired link: signing in with the right password sends a fresh one.
      sendOnSignIn: true,
      autoSignInAfterVerification: true,
      expiresIn: VERIFICATION_LINK_SECONDS,
      sendVerificationEmail: async ({ user, url }: { user: { email: string }; url: string }) => {
        await mailer.send(verificationMail(user.email, url));
      },
    },
  };
}

// The mails carry no name the sign-up form gave: anyone may type any address, so a stranger's
// words must not reach its owner from us.

export function verificationMail(to: string, url: string) {
  return {
    to,
    subject: 'Confirm your email address for Lockstep',
    text: [
      'To finish creating your Lockstep account, confirm this email address by opening this link (it works for one hour):',
      '',
      url,
      '',
      'If you did not sign up for Lockstep, ignore this email: nothing happens until the address is confirmed.',
    ].join('\n'),
  };
}

export function existingAccountMail(
  user: { email: string; emailVerified: boolean },
  config: Pick<Config, 'publicUrl' | 'supportEmail'>,
) {
  return {
    to: user.email,
    subject: 'Someone tried to create a Lockstep account with your email address',
    text: [
      'Someone just tried to create a Lockstep account with this email address, which already has one. Nothing was changed.',
      '',
      `If it was you, sign in instead: ${config.publicUrl}/sign-in`,
      ...(user.emailVerified
        ? []
        : ['Your address is not confirmed yet: signing in sends you a new confirmation link.']),
      `If you have forgotten your password, write to ${config.supportEmail}.`,
      '',
      'If it was not you, you can ignore this email.',
    ].join('\n'),
  };
}
