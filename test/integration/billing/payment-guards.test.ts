// Issue 29, finding 3: an administrator session pointed channel_c's gateway_url at its own host; within minutes
// the reconciler sent it the stored merchant key in the query string and settled an order on its unsigned
// answer; http:// gateways were accepted. Now a key or gateway URL change needs the acting administrator's
// password, a prod stage takes https gateways only, a gateway change is a security event mailed to every
// administrator, and an order is asked about only at the gateway it was placed with. Issue 37: switching the
// mock cashier needs the password too, and a deployment marked production refuses it whatever its name.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs as paymentsNeeds } from '#functions/payments/needs.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps, testSettings } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { startFakeEpay, startLoopbackServer } from '#test/support/fake-gateways/index.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { C_KEY, C_PID, call } from './helpers.ts';
import {
  type ChannelHarness,
  createPlan,
  placeOrder,
  reconcilerAhead,
  startChannels,
  storedOrder,
} from './reconcile-support.ts';

let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;
let channels: ChannelHarness;
/** The gateway channel_c was saved with: each test that moves it puts it back. */
let epayUrl: string;
const placed: string[] = [];
/** A reconciler 5 minutes ahead finds an order placed now due (first check after 3 minutes). */
const IN_WINDOW = 5;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  channels = await startChannels(admin);
  epayUrl = channels.epay.baseUrl;
  planId = await createPlan(admin, 'Guarded month');
});

afterEach(async () => {
  for (const id of placed.splice(0)) {
    if ((await storedOrder(table, id))?.status === 'pending') {
      await call('POST', `/api/v1/orders/${id}/cancel`, { headers: buyer.headers });
    }
  }
  await put({ channel_c: { gateway_url: epayUrl, api_url: channels.epay.mapiUrl } }, 'password');
});

afterAll(async () => {
  await channels?.close();
});

/**
 * A save; `as` 'password' sends the acting administrator's password. Each such save is made by an
 * administrator of its own: password checks are budgeted per account (lib/accounts/request-limits.ts).
 */
/** Settings of a production deployment whose administrators may act without a second factor. */
function withoutSecondFactorRule<S extends ReturnType<typeof testSettings>>(settings: S): S {
  return { ...settings, admin: { ...settings.admin, require_second_factor: false } };
}

async function put(body: object, as: 'no password' | 'password' | 'wrong password' = 'no password') {
  const actor = as === 'password' ? await createTestAccount({ role: 'admin' }) : admin;
  const password = { password: actor.password, 'wrong password': 'not-the-password-1' }[as as string];
  return call('PUT', '/api/v1/admin/payment', {
    headers: actor.headers,
    body: password === undefined ? body : { ...body, current_password: password },
  });
}

async function channelC() {
  return (await call('GET', '/api/v1/admin/payment', { headers: admin.headers })).json.data.channel_c;
}

describe('changing a key or a gateway URL', () => {
  it('needs current_password: missing or wrong is 400 naming it, and nothing changes', async () => {
    // Prepare
    const before = await channelC();
    const attempts = [
      { channel_c: { gateway_url: 'https://attacker.example.test/' } },
      { channel_c: { api_url: 'https://attacker.example.test/mapi.php' } },
      { channel_c: { key: 'a-key-of-my-choosing' } },
      { channel_a: { gateway_url: 'https://attacker.example.test/gateway.do' } },
      { channel_b: { api_base_url: 'https://attacker.example.test/' } },
    ];

    // Act
    const answers = [];
    for (const body of attempts) {
      answers.push(await put(body), await put(body, 'wrong password'));
    }

    // Assess
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.json.message).toMatch(/^current_password:/);
    }
    expect(await channelC()).toEqual(before);
  });

  it('takes no password for other fields nor a URL sent unchanged; a key sent unchanged still needs it', async () => {
    const pid = await put({ channel_c: { pay_type: 'alipay', gateway_url: epayUrl } });
    expect(pid.status).toBe(200);
    expect(pid.json.data.channel_c).toMatchObject({ pay_type: 'alipay', gateway_url: epayUrl });
    // Otherwise the answer would tell whether a guess is the stored key.
    const sameKey = await put({ channel_c: { key: C_KEY, pay_type: 'wxpay' } });
    const otherKey = await put({ channel_c: { key: 'a-guess-at-the-key', pay_type: 'wxpay' } });
    for (const answer of [sameKey, otherKey]) {
      expect(answer.status).toBe(400);
      expect(answer.json.message).toMatch(/^current_password:/);
    }
    expect((await put({ channel_c: { key: '', pay_type: 'wxpay' } })).status).toBe(200);
  });

  it('is a security event, and a notice to every administrator naming the new host and no key', async () => {
    // Prepare: the payments group with a mailer the test reads.
    const mail = memoryMailer();
    const deps = testDeps({ mailer: mail });
    const other = await createTestAccount({ role: 'admin' });
    const attacker = await startFakeEpay({ pid: C_PID, key: C_KEY });

    try {
      // Act
      const result = await deps.handlers.payments(
        apiEvent({
          method: 'PUT',
          path: '/api/v1/admin/payment',
          headers: admin.headers,
          sourceIp: '198.51.100.7',
          body: { channel_c: { gateway_url: `${attacker.baseUrl}/` }, current_password: admin.password },
        }),
        lambdaContext,
      );

      // Assess
      expect(result.statusCode).toBe(200);
      for (const who of [admin, other]) {
        const notices = mail.to(who.account.email!);
        expect(notices).toHaveLength(1);
        expect(notices[0]!.subject).toBe('A payment gateway address was changed');
        expect(notices[0]!.text).toContain(`channel_c.gateway_url: now ${attacker.baseUrl}`);
        expect(notices[0]!.text).toContain(admin.account.username);
        expect(notices[0]!.text).toContain('198.51.100.7');
        expect(JSON.stringify(notices[0])).not.toContain(C_KEY);
      }
      const events = await deps.handlers.accounts(
        apiEvent({ method: 'GET', path: '/auth/security/events', headers: admin.headers }),
        lambdaContext,
      );
      const types = (parseBody(events) as { data: { items: Array<{ type: string }> } }).data.items.map(
        (event) => event.type,
      );
      expect(types).toContain('payment_gateway_changed');
    } finally {
      await attacker.close();
    }
  });

  it('in a prod stage refuses an http:// gateway URL (400 naming the field), and takes https', async () => {
    // Prepare: every gateway on https (the fakes listen on http), then the payments group of a prod stage
    // over this file's table.
    const before = (await call('GET', '/api/v1/admin/payment', { headers: admin.headers })).json.data;
    const secured = await put(
      {
        channel_a: { gateway_url: 'https://openapi.example.test/gateway.do' },
        channel_b: { api_base_url: 'https://api.example.test/' },
        channel_c: { gateway_url: 'https://pay.example.test/', api_url: '' },
      },
      'password',
    );
    expect(secured.status).toBe(200);
    // The administrators' second-factor rule (on in production) is another test's (admin-second-factor).
    const settings = withoutSecondFactorRule({ ...testSettings(), stage: 'prod' });
    const prodDeps = buildPaymentsDeps(
      testResources('payments', paymentsNeeds, { settings, provided: { mail: memoryMailer() } }),
    );
    const prod = createPaymentsHandler(() => prodDeps);
    const save = async (channel: object) => {
      const result = await prod(
        apiEvent({
          method: 'PUT',
          path: '/api/v1/admin/payment',
          headers: admin.headers,
          // The mock cashier is never on in prod: the test's stored settings may have it on.
          body: { mock: { enabled: false }, ...channel, current_password: admin.password },
        }),
        lambdaContext,
      );
      return { status: result.statusCode, message: (parseBody(result) as { message: string }).message };
    };

    try {
      // Act
      const plain = await save({ channel_c: { gateway_url: 'http://pay.example.test/' } });
      const plainApi = await save({ channel_c: { api_url: 'http://pay.example.test/mapi.php' } });
      const plainA = await save({ channel_a: { gateway_url: 'http://openapi.example.test/gateway.do' } });
      const secure = await save({ channel_c: { gateway_url: 'https://pay2.example.test/' } });

      // Assess
      expect(plain).toMatchObject({
        status: 400,
        message: expect.stringMatching(/^channel_c\.gateway_url: /),
      });
      expect(plainApi).toMatchObject({
        status: 400,
        message: expect.stringMatching(/^channel_c\.api_url: /),
      });
      expect(plainA).toMatchObject({
        status: 400,
        message: expect.stringMatching(/^channel_a\.gateway_url: /),
      });
      expect(secure.status).toBe(200);
    } finally {
      await put(
        {
          mock: { enabled: before.mock.enabled },
          channel_a: { gateway_url: before.channel_a.gateway_url },
          channel_b: { api_base_url: before.channel_b.api_base_url },
        },
        'password',
      );
    }
  });
});

describe('the mock cashier', () => {
  const mockOn = async () =>
    (await call('GET', '/api/v1/admin/payment', { headers: admin.headers })).json.data.mock.enabled;
  const gateways = async () => (await call('GET', '/api/v1/payment-gateways')).json.data as string[];

  it('is switched off or on only with current_password: missing or wrong is 400 naming it, and nothing changes', async () => {
    // Prepare: the test config has it on.
    expect(await mockOn()).toBe(true);

    // Act
    const offWithout = await put({ mock: { enabled: false } });
    const offWrong = await put({ mock: { enabled: false } }, 'wrong password');
    const stillOn = await mockOn();
    const unchanged = await put({ mock: { enabled: true } });
    const off = await put({ mock: { enabled: false } }, 'password');
    const onWithout = await put({ mock: { enabled: true } });
    const stillOff = [await mockOn(), await gateways()];
    const on = await put({ mock: { enabled: true } }, 'password');

    // Assess
    for (const refused of [offWithout, offWrong, onWithout]) {
      expect(refused.status).toBe(400);
      expect(refused.json.message).toMatch(/^current_password: /);
    }
    expect(stillOn).toBe(true);
    expect(unchanged.status).toBe(200);
    expect(off.status).toBe(200);
    expect(off.json.data.mock.enabled).toBe(false);
    expect(stillOff).toEqual([false, expect.not.arrayContaining(['mock'])]);
    expect(on.status).toBe(200);
    expect(await gateways()).toContain('mock');
  });

  it('is refused by a deployment marked production, whatever its stage name, even with the password', async () => {
    // Prepare: the stored settings have it on; the payments group of a stage named `live` marked production.
    expect(await mockOn()).toBe(true);
    // The administrators' second-factor rule (on in production) is another test's (admin-second-factor).
    const settings = withoutSecondFactorRule({
      ...testSettings(),
      stage: 'live',
      deployment: { production: true },
    });
    const deps = buildPaymentsDeps(
      testResources('payments', paymentsNeeds, { settings, provided: { mail: memoryMailer() } }),
    );
    const production = createPaymentsHandler(() => deps);
    const send = async (method: string, path: string, body?: object) => {
      const result = await production(
        apiEvent({ method, path, headers: admin.headers, ...(body ? { body } : {}) }),
        lambdaContext,
      );
      return { status: result.statusCode, json: parseBody(result) as { message: string; data: unknown } };
    };

    // Act
    const listed = await send('GET', '/api/v1/payment-gateways');
    const ordered = await send('POST', '/api/v1/orders', { plan_id: planId, provider: 'mock' });
    const enabled = await send('PUT', '/api/v1/admin/payment', {
      mock: { enabled: true },
      current_password: admin.password,
    });

    // Assess
    expect(listed.json.data).not.toContain('mock');
    expect(ordered.status).toBe(400);
    expect(ordered.json.message).toMatch(/^provider: mock is not available/);
    expect(enabled.status).toBe(400);
    expect(enabled.json.message).toBe('mock.enabled: the mock cashier cannot be enabled in production');
    // The same stored settings in this file's own (unmarked) stage still offer it.
    expect(await gateways()).toContain('mock');
  });
});

describe('reconciliation after a gateway change', () => {
  it('never sends the key for an order to a gateway other than the one it was placed with, and settles nothing from it', async () => {
    // Prepare: an order placed at the real gateway; then the gateway moved to a host that says "paid" to all.
    const id = await placeOrder(buyer, planId, 'channel_c');
    placed.push(id);
    expect((await storedOrder(table, id))?.gateway_origin).toBe(new URL(epayUrl).origin);
    const attacker = await startFakeEpay({ pid: C_PID, key: C_KEY });
    attacker.queries.set(id, 'paid');
    const moved = await put({ channel_c: { gateway_url: `${attacker.baseUrl}/` } }, 'password');
    expect(moved.status).toBe(200);

    try {
      // Act
      const summary = await reconcilerAhead(IN_WINDOW)();

      // Assess
      expect(summary.providers.channel_c).toMatchObject({ checked: 1, settled: 0, failed: 1 });
      expect(attacker.requests).toEqual([]);
      expect(attacker.queries.timesQueried(id)).toBe(0);
      expect(await storedOrder(table, id)).toMatchObject({ status: 'pending' });
    } finally {
      await attacker.close();
    }
  });

  it('settles nothing on an answer another host gives through a redirect from the gateway', async () => {
    // Prepare: channel_c's gateway redirects order queries to a host that answers "paid".
    const elsewhere = await startFakeEpay({ pid: C_PID, key: C_KEY });
    const redirector = await startLoopbackServer((request) => ({
      status: 302,
      headers: { location: `${elsewhere.baseUrl}${request.url}` },
      body: '',
    }));
    try {
      const moved = await put(
        { channel_c: { gateway_url: `${redirector.baseUrl}/`, api_url: '' } },
        'password',
      );
      expect(moved.status).toBe(200);
      const id = await placeOrder(buyer, planId, 'channel_c');
      placed.push(id);
      elsewhere.queries.set(id, 'paid');

      // Act
      const summary = await reconcilerAhead(IN_WINDOW)();

      // Assess: the gateway was asked, its redirect not followed.
      expect(redirector.requests.some((request) => request.url.includes(id))).toBe(true);
      expect(elsewhere.requests).toEqual([]);
      expect(summary.providers.channel_c).toMatchObject({ checked: 1, settled: 0, failed: 1 });
      expect(await storedOrder(table, id)).toMatchObject({ status: 'pending' });
    } finally {
      await Promise.all([redirector.close(), elsewhere.close()]);
    }
  });

  it('still settles an order at the gateway it was placed with', async () => {
    const id = await placeOrder(buyer, planId, 'channel_c');
    placed.push(id);
    channels.epay.queries.set(id, 'paid');
    const summary = await reconcilerAhead(IN_WINDOW)();
    expect(summary.providers.channel_c).toMatchObject({ checked: 1, settled: 1 });
    expect(await storedOrder(table, id)).toMatchObject({ status: 'paid', paid_via: 'reconciliation' });
  });
});
