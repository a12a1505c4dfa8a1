// Runs the SES stand-in (aws-ses-v2-local: SES's SendEmail and SendRawEmail, an inbox page at its root
// URL, `GET /store` as JSON, `POST /clear-store`) inside this process; with a folder, the mails it holds
// are kept in a file there, so they outlive a restart as the other stand-ins' data does.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

interface SesStore {
  getStoreReadonly(): { emails: unknown[] };
  saveEmail(email: unknown): void;
  clearStore(): void;
}

export async function startSesLocal(options: { directory?: string; port?: number } = {}) {
  const require = createRequire(import.meta.url);
  if (options.directory) keepMails(require('aws-ses-v2-local/dist/store.js'), options.directory);
  const serve = require('aws-ses-v2-local').default as (config: object) => Promise<Server>;
  const server = await serve({ host: '127.0.0.1', port: options.port ?? 0 });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/** The store's mails, one JSON line each in `<directory>/mails.jsonl`: read back at start, cleared with it. */
function keepMails(store: SesStore, directory: string): void {
  const file = join(directory, 'mails.jsonl');
  mkdirSync(directory, { recursive: true });
  const kept = readFileSync(file, { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean);
  store.getStoreReadonly().emails.push(...kept.map((line) => JSON.parse(line) as unknown));
  const { saveEmail, clearStore } = store;
  store.saveEmail = (email) => {
    appendFileSync(file, `${JSON.stringify(email)}\n`);
    saveEmail(email);
  };
  store.clearStore = () => {
    writeFileSync(file, '');
    clearStore();
  };
}

/** The subjects and texts of the mails the stand-in at `inbox` holds for `to`, newest first. */
export async function mailsTo(inbox: string, to: string): Promise<Array<{ subject: string; text: string }>> {
  const { emails } = (await (await fetch(`${inbox}/store`)).json()) as {
    emails: Array<{ destination: { to: string[] }; subject: string; body: { text?: string } }>;
  };
  return emails
    .filter((mail) => mail.destination.to.includes(to))
    .map((mail) => ({ subject: mail.subject, text: mail.body.text ?? '' }))
    .reverse();
}
