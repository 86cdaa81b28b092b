import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export type ReceivedMail = { from: string; to: string[]; subject: string; text: string };

export type SmtpSink = {
  url: string;
  mails: ReceivedMail[];
  /** The first mail to `to` (beyond those already taken) whose subject matches; waits for it. */
  next: (to: string, subject: RegExp, timeoutMs?: number) => Promise<ReceivedMail>;
  close: () => Promise<void>;
};

/** An SMTP server on 127.0.0.1 that keeps every mail it is given (no TLS, no login). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
          });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(to, subject, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = mails.find(
          (m) => !taken.has(m) && m.to.includes(to.toLowerCase()) && subject.test(m.subject),
        );
        if (mail) {
          taken.add(mail);
          return mail;
        }
        if (Date.now() > deadline) {
          const seen = mails.map((m) => `${m.to.join(',')}: ${m.subject}`).join('\n  ');
          throw new Error(
            `No mail to ${to} matching ${subject} within ${timeoutMs} ms; received:\n  ${seen}`,
          );
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
