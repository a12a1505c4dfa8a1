// How the service sends mail: one interface; the log fallback when no mail channel is configured.
import { log } from '#lib/platform/log.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The verification code a mail carries, if any: written to the log by the no-mail fallback. */
  code?: string;
  /** A download link the mail carries (an account export's): written to the log by the no-mail fallback. */
  link?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * docs/SPEC.md 4.1 rule 9: without a real mail channel, each mail is one JSON log line with `to`, `subject`
 * and, for codes, `code`: the one place a code may appear in a log.
 */
export const logMailer: Mailer = {
  async send(mail) {
    log.unredacted('mail', {
      to: mail.to,
      subject: mail.subject,
      ...(mail.code ? { code: mail.code } : {}),
      ...(mail.link ? { link: mail.link } : {}),
    });
  },
};
