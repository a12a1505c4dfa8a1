// `npm run tour`: the README's tour against a running `npm start`, step by step, with nothing to copy by
// hand: register (the code from the SES stand-in's inbox), log in, an API token, an upload and its URL, a plan
// bought with the mock cashier. It finds the running `npm start` by itself (its data folder records where it
// answers); `TOUR_BASE_URL` points it elsewhere. A failed step ends it with one line, not a stack trace.
import { resolve } from 'node:path';
import { deflateSync } from 'node:zlib';
import { mailsTo } from '#infra/local/ses-local.ts';
import { ConfigError, loadConfig } from '#lib/platform/config/load.ts';
import { readRunningStack } from './running-stack.ts';

class TourError extends Error {}

const settings = (() => {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
})();
const base = (
  process.env.TOUR_BASE_URL ??
  readRunningStack(settings.data_dir)?.api_url ??
  `http://localhost:${settings.port}`
).replace(/\/+$/, '');

// biome-ignore lint/suspicious/noExplicitAny: the tour prints whatever comes back
type Answer = { status: number; body: { code?: number; message?: string; data?: any } };

let step = 0;
async function call(
  method: string,
  path: string,
  options: { token?: string; json?: unknown; form?: FormData } = {},
) {
  step += 1;
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | FormData | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) body = options.form;
  const response = await fetch(`${base}${path}`, { method, headers, ...(body ? { body } : {}) }).catch(
    (error: unknown) => {
      throw new TourError(
        `${base} does not answer (${(error as Error).cause ?? error}): is npm start running?`,
      );
    },
  );
  const answer: Answer = { status: response.status, body: (await response.json()) as Answer['body'] };
  const summary = JSON.stringify(answer.body.data ?? answer.body.message)?.slice(0, 110);
  console.log(`${String(step).padStart(2)}. ${method} ${path} -> ${answer.status} ${summary}`);
  if (answer.status >= 400) throw new TourError(`step ${step} failed: ${answer.body.message}`);
  return answer.body.data;
}

/** The newest code mailed to `to`, from the inbox of the running npm start's SES stand-in. */
async function codeFor(to: string): Promise<string> {
  const inbox = readRunningStack(settings.data_dir)?.inbox_url;
  if (!inbox)
    throw new TourError(`no running npm start in ${resolve(settings.data_dir)} whose inbox to read`);
  for (let attempt = 0; attempt < 20; attempt++) {
    const code = (await mailsTo(inbox, to)).map((mail) => /\b\d{6}\b/.exec(mail.text)?.[0]).find(Boolean);
    if (code) return code;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new TourError(`no code for ${to} in the inbox at ${inbox}`);
}

/** A tiny PNG of one random colour, so every run uploads new bytes. */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(typed.length + 8);
    out.writeUInt32BE(data.length, 0);
    typed.copy(out, 4);
    out.writeUInt32BE(crc(typed), typed.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const pixel = Buffer.from([0, ...Array.from({ length: 3 }, () => Math.floor(Math.random() * 256))]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixel)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function tour(): Promise<void> {
  const suffix = Date.now().toString(36);
  const user = {
    username: `tour_${suffix}`,
    email: `tour_${suffix}@example.com`,
    password: 'a-good-password',
  };
  console.log(`Tour of ${base}`);
  await call('GET', '/healthz');
  await call('POST', '/auth/register/code', { json: { email: user.email } });
  const code = await codeFor(user.email);
  await call('POST', '/auth/register', { json: { ...user, code } });
  const session = await call('POST', '/auth/login', {
    json: { username: user.email, password: user.password },
  });
  await call('GET', '/auth/me', { token: session.token });
  const apiToken = await call('POST', '/api/v1/tokens', { token: session.token, json: { name: 'tour' } });
  const form = new FormData();
  form.append('file', new Blob([png()], { type: 'image/png' }), 'tour.png');
  const record = await call('POST', '/api/v1/upload', { token: apiToken.token, form });
  const served = await fetch(record.url).catch((error: unknown) => {
    throw new TourError(`${record.url} does not answer (${(error as Error).cause ?? error})`);
  });
  console.log(`    GET ${record.url} -> ${served.status} ${served.headers.get('content-type')}`);
  const admin = settings.admin.bootstrap;
  if (admin.username && admin.password) {
    const adminSession = await call('POST', '/admin/auth/login', {
      json: { username: admin.username, password: admin.password },
    });
    const plan = await call('POST', '/api/v1/admin/plans', {
      token: adminSession.token,
      json: { name: `Tour plan ${suffix}`, amount_cents: 1230 },
    });
    const order = await call('POST', '/api/v1/orders', {
      token: session.token,
      json: { plan_id: plan.id, provider: 'mock' },
    });
    console.log(`    (a browser would open ${order.pay_url} and press Pay)`);
    await call('POST', `/api/v1/orders/${order.id}/pay`, { token: session.token });
  } else {
    console.log('    (no admin.bootstrap in the config: the plan and order steps are skipped)');
  }
  console.log(`Done. The API document: ${base}/docs`);
}

await tour().catch((error: unknown) => {
  console.error(error instanceof TourError ? error.message : `The tour failed: ${(error as Error).message}`);
  process.exit(1);
});
