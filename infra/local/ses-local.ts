// The SES stand-in (aws-ses-v2-local: SendEmail and SendRawEmail, an inbox page at its root URL, `GET /store`
// as JSON, `POST /clear-store`) in this process. With a folder its mails are kept in `mails.jsonl` there, so
// they outlive a restart as the other stand-ins' data does.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

type Store = {
  getStoreReadonly(): { emails: unknown[] };
  saveEmail(mail: unknown): void;
  clearStore(): void;
};

export async function startSesLocal(options: { directory?: string; port?: number } = {}) {
  const require = createRequire(import.meta.url);
  if (options.directory) {
    const store: Store = require('aws-ses-v2-local/dist/store.js');
    const file = join(options.directory, 'mails.jsonl');
    mkdirSync(options.directory, { recursive: true });
    const kept = readFileSync(file, { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean);
    store.getStoreReadonly().emails.push(...kept.map((line) => JSON.parse(line) as unknown));
    const { saveEmail, clearStore } = store;
    store.saveEmail = (mail) => {
      appendFileSync(file, `${JSON.stringify(mail)}\n`);
      saveEmail(mail);
    };
    store.clearStore = () => {
      writeFileSync(file, '');
      clearStore();
    };
  }
  const serve = require('aws-ses-v2-local').default as (config: object) => Promise<Server>;
  const server = await serve({ host: '127.0.0.1', port: options.port ?? 0 });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((done) => server.close(() => done()).closeAllConnections()),
  };
}
