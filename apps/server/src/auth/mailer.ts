import nodemailer from 'nodemailer';

export type MailMessage = { to: string; subject: string; text: string };

export type Mailer = {
  send: (message: MailMessage) => Promise<void>;
  close: () => void;
};

/**
 * Sends plain-text mail through one SMTP server (LOCKSTEP_SMTP_URL: smtp://, or smtps:// for TLS
 * from the start; user and password in the URL). nodemailer upgrades smtp:// with STARTTLS when
 * the server offers it.
 */
export function createMailer(settings: { smtpUrl: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(settings.smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from: settings.from, ...message });
    },
    close: () => transport.close(),
  };
}
