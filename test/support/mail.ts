// Reading the mail the service sent: from an in-memory mailer, from the log fallback's lines, or from
// an SES stand-in (aws-ses-v2-local; `GET /store` lists what it received): npm start's or one in process.
import { startSesLocal } from '#infra/local/ses-local.ts';
import { configureLogging } from '#lib/platform/log.ts';
import type { Mail, Mailer } from '#lib/platform/mail/mailer.ts';

export interface SentMail {
  to: string;
  subject: string;
  text?: string;
  html?: string;
  code?: string;
}

function lastCodeIn(mails: SentMail[], to: string): string | undefined {
  for (let index = mails.length - 1; index >= 0; index--) {
    const mail = mails[index]!;
    if (mail.to.toLowerCase() !== to.toLowerCase()) continue;
    const code = mail.code ?? /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
    if (code) return code;
  }
  return undefined;
}

/** A mailer that keeps every mail in memory (integration tests). */
export function memoryMailer(): Mailer & {
  sent: Mail[];
  to(address: string): Mail[];
  codeFor(to: string): string;
} {
  const sent: Mail[] = [];
  return {
    sent,
    async send(mail) {
      sent.push(mail);
    },
    to: (address) => sent.filter((mail) => mail.to.toLowerCase() === address.toLowerCase()),
    codeFor(to) {
      const code = lastCodeIn(sent, to);
      if (!code) throw new Error(`no code was mailed to ${to}`);
      return code;
    },
  };
}

/** Captures every log line of this process (level info) to read the no-mail fallback lines. */
export function captureLog() {
  const lines: string[] = [];
  configureLogging({ level: 'info', sink: (line) => lines.push(line) });
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    lines,
    mails: (): SentMail[] =>
      parsed()
        .filter((line) => line.message === 'mail')
        .map((line) => line as unknown as SentMail),
    codeFor(to: string): string {
      const code = lastCodeIn(this.mails(), to);
      if (!code) throw new Error(`no code was logged for ${to}`);
      return code;
    },
    stop: () => configureLogging({ level: 'silent', sink: () => undefined }),
  };
}

interface StoredSesMail {
  from: string;
  destination: { to: string[] };
  subject: string;
  body: { text?: string; html?: string };
}

/**
 * The mail an SES stand-in holds (`GET /store`): npm start's (the inbox address it prints) or one of a
 * test's own. `codeFor` and `linkFor` wait a little for the newest mail to `to` that carries one.
 */
export function sesInbox(endpoint: string) {
  const mails = async (): Promise<SentMail[]> => {
    const response = await fetch(`${endpoint}/store`);
    const { emails } = (await response.json()) as { emails: StoredSesMail[] };
    return emails.flatMap((mail) =>
      mail.destination.to.map((to) => ({
        to,
        subject: mail.subject,
        text: mail.body.text,
        html: mail.body.html,
      })),
    );
  };
  const newest = async (to: string, pick: (mails: SentMail[]) => string | undefined, what: string) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const found = pick(await mails());
      if (found) return found;
      await new Promise((wait) => setTimeout(wait, 100));
    }
    throw new Error(`no ${what} was mailed to ${to}`);
  };
  return {
    endpoint,
    mails,
    codeFor: (to: string) => newest(to, (all) => lastCodeIn(all, to), 'code'),
    /** The newest reset link mailed to `to` (`{base_url}/#/reset?token=…`). */
    linkFor: (to: string) =>
      newest(
        to,
        (all) =>
          all
            .filter((mail) => mail.to.toLowerCase() === to.toLowerCase())
            .map((mail) => /\bhttps?:\/\/\S+#\/reset\?token=\S+/.exec(mail.text ?? '')?.[0])
            .findLast(Boolean),
        'reset link',
      ),
    clear: () => fetch(`${endpoint}/clear-store`, { method: 'POST' }),
  };
}

/** The SES stand-in (infra/local/ses-local.ts), in process, on a free port, its mail in memory. */
export async function startSesStandIn() {
  const running = await startSesLocal();
  return { ...sesInbox(running.endpoint), close: running.stop };
}
