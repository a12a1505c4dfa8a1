// Logs and metrics of the real groups served by the local server (docs/OBSERVABILITY.md): `x-request-id` on
// every answer over HTTP, equal to the one access line of that request; no password or token in any line;
// the business counts of real logins, uploads, orders and refused channel notices as EMF documents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startLocalApp } from '#infra/local/app.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { configureMetrics } from '#lib/platform/observability/metrics.ts';
import { C_KEY, C_PID } from '#test/integration/billing/helpers.ts';
import { createTestAccount, TEST_PASSWORD, type TestAccount } from '#test/support/accounts.ts';
import { buildEpayNotify, epayNotifyFields } from '#test/support/fake-gateways/index.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';

interface Line extends Record<string, unknown> {
  level: string;
  message: string;
}
type EmfDocument = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][] }> };
};

const lines: string[] = [];
const documents: EmfDocument[] = [];
let app: RunningApp;
let user: TestAccount;
let admin: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  configureLogging({ level: 'info', sink: (line) => lines.push(line) });
  configureMetrics({ sink: (document) => documents.push(JSON.parse(document) as EmfDocument) });
  app = await startLocalApp({ port: 0 });
  [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
});
afterAll(async () => {
  configureLogging({ level: 'silent' });
  configureMetrics({ sink: null });
  await app?.close();
});

const parsedLines = () => lines.map((line) => JSON.parse(line) as Line);
const accessLinesOf = (requestId: string) =>
  parsedLines().filter((line) => line.message === 'request' && line.request_id === requestId);

/** The values of `name` in the documents written since `from`, whose dimensions include `dimensions`. */
function valuesOf(name: string, dimensions: Record<string, string>, from = 0): unknown[] {
  return documents
    .slice(from)
    .filter((document) => name in document)
    .filter((document) => Object.entries(dimensions).every(([key, value]) => document[key] === value))
    .map((document) => document[name]);
}

async function api(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json: { code: number; data: Record<string, unknown> } | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, requestId: response.headers.get('x-request-id') ?? '', json };
}

describe('over HTTP through the local server', () => {
  it('answers x-request-id on success, 401 and 404, each equal to the one access line of that request', async () => {
    const answers = [
      await api('GET', '/healthz'),
      await api('GET', '/auth/me'),
      await api('GET', '/no/such/page'),
      await api('GET', '/auth/me', { headers: user.headers }),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, 200]);
    for (const answer of answers) {
      expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
      const access = accessLinesOf(answer.requestId);
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ status: answer.status, method: 'GET' });
    }
    expect(new Set(answers.map((answer) => answer.requestId)).size).toBe(answers.length);
    expect(accessLinesOf(answers[2]!.requestId)[0]!.route).toBe('unmatched');
    expect(accessLinesOf(answers[3]!.requestId)[0]).toMatchObject({
      route: 'GET /auth/me',
      function: 'accounts',
      principal: 'session',
      role: 'user',
      account_id: user.account.id,
    });
    expect(lines.join('\n')).not.toContain(user.token);
  });

  it('counts logins and failed logins, and writes neither password nor session token', async () => {
    const from = documents.length;
    const good = await api('POST', '/auth/login', {
      body: { username: user.account.username, password: TEST_PASSWORD },
    });
    const bad = await api('POST', '/api/v1/auth/login', {
      body: { username: user.account.username, password: 'not-the-password-1' },
    });

    expect([good.status, bad.status]).toEqual([200, 401]);
    expect(valuesOf('Logins', { route: 'POST /auth/login' }, from)).toEqual([1]);
    expect(valuesOf('LoginsFailed', { route: 'POST /auth/login' }, from)).toEqual([1]);
    expect(accessLinesOf(good.requestId)[0]).toMatchObject({ route: 'POST /auth/login', principal: 'none' });
    const everything = lines.join('\n');
    expect(everything).not.toContain(TEST_PASSWORD);
    expect(everything).not.toContain(String(good.json?.data.token));
  });

  it('counts an upload and its bytes as the answer states them', async () => {
    const from = documents.length;
    const form = new FormData();
    form.append('file', new Blob([makePng(7, 5)], { type: 'image/png' }), 'dot.png');
    const response = await fetch(`${app.url}/api/v1/upload`, {
      method: 'POST',
      headers: user.headers,
      body: form,
    });
    const answer = (await response.json()) as { data: { size: number } };

    expect(response.status).toBe(200);
    expect(valuesOf('Uploads', { route: 'POST /api/v1/upload' }, from)).toEqual([1]);
    expect(valuesOf('UploadedBytes', { route: 'POST /api/v1/upload' }, from)).toEqual([answer.data.size]);
    expect(accessLinesOf(response.headers.get('x-request-id') ?? '')).toHaveLength(1);
  });

  it('counts an order created, per provider', async () => {
    const plan = await api('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Observed month', amount_cents: 990 },
    });
    const from = documents.length;

    const order = await api('POST', '/api/v1/orders', {
      headers: user.headers,
      body: { plan_id: plan.json?.data.id, provider: 'mock' },
    });

    expect(order.status).toBe(201);
    expect(valuesOf('OrdersCreated', { provider: 'mock' }, from)).toEqual([1]);
  });

  it('counts refused channel notices per provider and reason, an unknown provider under `unknown`', async () => {
    const from = documents.length;
    const notify = (provider: string, query = '') =>
      api('GET', `/api/v1/payments/${provider}/callback${query}`);

    const mock = await notify('mock');
    const unknown = await notify('no_such_provider_7');
    const disabled = await notify('channel_c');
    const saved = await api('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: {
        channel_c: { enabled: true, pid: C_PID, key: C_KEY, gateway_url: 'https://pay.example.test/' },
        current_password: admin.password,
      },
    });
    const forged = buildEpayNotify({
      key: 'not-the-merchant-key-0000',
      fields: epayNotifyFields({ pid: C_PID, out_trade_no: 'o-forged', money: '9.90' }),
    });
    const refused = await notify('channel_c', `?${forged.rawQuery}`);

    expect([mock.status, unknown.status, disabled.status, saved.status, refused.status]).toEqual([
      403, 404, 404, 200, 400,
    ]);
    expect(valuesOf('CallbacksRefused', { provider: 'mock', reason: 'not_a_channel' }, from)).toEqual([1]);
    expect(valuesOf('CallbacksRefused', { provider: 'unknown', reason: 'no_such_channel' }, from)).toEqual([
      1,
    ]);
    expect(
      valuesOf('CallbacksRefused', { provider: 'channel_c', reason: 'channel_not_enabled' }, from),
    ).toEqual([1]);
    expect(
      valuesOf('CallbacksRefused', { provider: 'channel_c', reason: 'signature_does_not_verify' }, from),
    ).toEqual([1]);
    // The provider a caller typed is never a dimension value.
    expect(JSON.stringify(documents.slice(from))).not.toContain('no_such_provider_7');
  });
});
