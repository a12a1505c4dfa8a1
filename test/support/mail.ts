// Reading the mail the service sent: from an in-memory mailer, from the log fallback's lines, or from
// the SES stand-in (aws-ses-v2-local, in-process; `GET /store` lists what it received).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** The SES stand-in, in process, on a free port. */
export async function startSesStandIn() {
  type Serve = (config: { host: string; port: number }) => Promise<Server>;
  // A CommonJS module with an ES default: the function is `default` or `default.default` by loader.
  const loaded = (await import('aws-ses-v2-local')) as unknown as { default: Serve | { default: Serve } };
  const serve = typeof loaded.default === 'function' ? loaded.default : loaded.default.default;
  const server = await serve({ host: '127.0.0.1', port: 0 });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
  return {
    endpoint,
    mails,
    async codeFor(to: string): Promise<string> {
      const code = lastCodeIn(await mails(), to);
      if (!code) throw new Error(`no code was mailed to ${to}`);
      return code;
    },
    clear: () => fetch(`${endpoint}/clear-store`, { method: 'POST' }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
