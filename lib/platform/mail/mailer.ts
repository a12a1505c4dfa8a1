// How the service sends mail: one interface; the log fallback when no mail channel is configured.
import { escapeHtml } from '#lib/platform/html.ts';
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

/** Every mail signed off with the site's name (docs/DEPLOYMENT.md "Branding"), in its text and its HTML. */
export function signedMailer(mailer: Mailer, siteName: () => Promise<string>): Mailer {
  return {
    async send(mail) {
      const name = await siteName();
      const html = mail.html.replace(/<\/body>|$/, (end) => `<p>— ${escapeHtml(name)}</p>\n${end}`);
      await mailer.send({ ...mail, text: `${mail.text.trimEnd()}\n\n— ${name}\n`, html });
    },
  };
}
