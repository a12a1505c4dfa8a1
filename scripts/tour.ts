// `npm run tour`: the README's tour against a running `npm start`, step by step, with nothing to copy by
// hand: register (the code from the SES stand-in's inbox), log in, an API token, an upload and its URL, a plan
// bought with the mock cashier. It finds the running `npm start` by itself (its data folder records where it
// answers); `TOUR_BASE_URL` points it elsewhere. A failed step ends it with one line, not a stack trace.
import { randomInt } from 'node:crypto';
import { resolve } from 'node:path';
import sharp from 'sharp';
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

/** The newest code mailed to `to`, from the inbox (`GET /store`) of the running npm start's SES stand-in. */
async function codeFor(to: string): Promise<string> {
  const inbox = readRunningStack(settings.data_dir)?.inbox_url;
  const { emails } = inbox
    ? ((await (await fetch(`${inbox}/store`)).json()) as {
        emails: Array<{ destination: { to: string[] }; body: { text: string } }>;
      })
    : { emails: [] };
  const mail = emails.findLast((sent) => sent.destination.to.includes(to));
  const code = mail && /\b\d{6}\b/.exec(mail.body.text)?.[0];
  if (!code)
    throw new TourError(`no code for ${to} in the inbox of npm start in ${resolve(settings.data_dir)}`);
  return code;
}

/** A tiny PNG of one random colour, so every run uploads new bytes. */
function png(): Promise<Buffer> {
  const background = { r: randomInt(256), g: randomInt(256), b: randomInt(256) };
  return sharp({ create: { width: 1, height: 1, channels: 3, background } })
    .png()
    .toBuffer();
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
  form.append('file', new Blob([await png()], { type: 'image/png' }), 'tour.png');
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
      // A month of 10 GiB (docs/PAYMENTS-GUIDE.md "Plans that grant storage"), as the README's tour.
      json: {
        name: `Pro month ${suffix}`,
        amount_cents: 1230,
        quota_bytes: 10 * 1024 ** 3,
        duration_days: 30,
      },
    });
    const order = await call('POST', '/api/v1/orders', {
      token: session.token,
      json: { plan_id: plan.id, provider: 'mock' },
    });
    console.log(`    (a browser would open ${order.pay_url} and press Pay)`);
    await call('POST', `/api/v1/orders/${order.id}/pay`, { token: session.token });
    const usage = await call('GET', '/api/v1/usage', { token: session.token });
    console.log(
      `    paid: quota ${usage.quota_bytes} bytes until ${usage.plan?.expires_at} (${usage.plan?.name})`,
    );
  } else {
    console.log('    (no admin.bootstrap in the config: the plan and order steps are skipped)');
  }
  console.log(`Done. The API document: ${base}/docs`);
}

await tour().catch((error: unknown) => {
  console.error(error instanceof TourError ? error.message : `The tour failed: ${(error as Error).message}`);
  process.exit(1);
});
