// channel_a, channel_b and channel_c end to end: settings saved through the API, orders created against fake
// gateways on 127.0.0.1, callbacks signed the way each channel signs them, settlement counted in the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { orderKey } from '#lib/billing/orders.ts';
import { usageKey } from '#lib/files/usage.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import {
  alipayNotifyFields,
  buildAlipayNotify,
  buildEpayNotify,
  buildWechatpayCallback,
  epayNotifyFields,
  type FakeAlipayGateway,
  type FakeEpay,
  type FakeWechatpay,
  generateTestKeyPair,
  type LoopbackServer,
  startFakeChannels,
  startLoopbackServer,
  wechatpayTransaction,
} from '#test/support/fake-gateways/index.ts';
import { drainOutbox } from '#test/support/outbox.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import {
  type Answer,
  B_API_V3_KEY,
  B_PLATFORM_SERIAL,
  C_KEY,
  C_PID,
  call,
  captureLog,
  deliverCallback,
  paidEvents,
} from './helpers.ts';

const NOTIFY_BASE = 'http://localhost:3000/api/v1/payments';

// Generated once for the file (RSA generation is the slow part).
const appKeys = generateTestKeyPair();
const alipayKeys = generateTestKeyPair();
const merchantKeys = generateTestKeyPair();
const platformKeys = generateTestKeyPair();
const strangerKeys = generateTestKeyPair();

const log = captureLog();
let table: Table;
let admin: TestAccount;
let alice: TestAccount;
let planId: string;
let yuanPlanId: string;
let storagePlanId: string;
let alipay: FakeAlipayGateway;
let wechatpay: FakeWechatpay;
let epay: FakeEpay;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, alice] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  const channels = await startFakeChannels({
    app: appKeys,
    alipay: alipayKeys,
    merchant: merchantKeys,
    platform: platformKeys,
  });
  ({ alipay, wechatpay, epay } = channels);
  const saved = await call('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    body: { ...channels.settings, current_password: admin.password },
  });
  expect(saved.status).toBe(200);
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'VIP month', amount_cents: 1230 },
  });
  planId = plan.json.data.id;
  const yuan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'One yuan', amount_cents: 100 },
  });
  yuanPlanId = yuan.json.data.id;
  const storage = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Storage month', amount_cents: 1230, quota_bytes: 5 * 1024 ** 2, duration_days: 30 },
  });
  storagePlanId = storage.json.data.id;
});

afterAll(async () => {
  await Promise.all([alipay?.close(), wechatpay?.close(), epay?.close()]);
});

type Channel = 'channel_a' | 'channel_b' | 'channel_c';

async function placeOrder(provider: string, plan = planId): Promise<Answer> {
  return call('POST', '/api/v1/orders', { headers: alice.headers, body: { plan_id: plan, provider } });
}

async function storedOrder(id: string) {
  return table.get(orderKey(id));
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A valid callback for this order from each channel, with per-case changes. */
interface CallbackTweaks {
  fields?: Record<string, string>;
  transaction?: Record<string, unknown>;
  signedBy?: 'platform' | 'stranger';
  signature?: string;
  key?: string;
  timestamp?: number;
  corruptCiphertext?: boolean;
  method?: 'GET' | 'POST';
  headerStyle?: 'wechatpay' | 'neutral';
}

function callbackFor(channel: Channel, orderId: string, tweaks: CallbackTweaks = {}): CallbackRequest {
  const signer = tweaks.signedBy === 'stranger' ? strangerKeys.privateKey : undefined;
  if (channel === 'channel_a') {
    return buildAlipayNotify({
      alipayPrivateKey: signer ?? alipayKeys.privateKey,
      fields: alipayNotifyFields({ out_trade_no: orderId, ...tweaks.fields }),
      ...(tweaks.signature ? { signature: tweaks.signature } : {}),
    });
  }
  if (channel === 'channel_b') {
    return buildWechatpayCallback({
      platformPrivateKey: signer ?? platformKeys.privateKey,
      platformSerial: B_PLATFORM_SERIAL,
      apiV3Key: B_API_V3_KEY,
      timestamp: tweaks.timestamp ?? nowSeconds(),
      transaction: wechatpayTransaction({ out_trade_no: orderId, ...tweaks.transaction }),
      ...(tweaks.corruptCiphertext ? { corruptCiphertext: true } : {}),
      ...(tweaks.signature ? { signature: tweaks.signature } : {}),
      ...(tweaks.headerStyle ? { headerStyle: tweaks.headerStyle } : {}),
    }).request;
  }
  return buildEpayNotify({
    key: tweaks.key ?? C_KEY,
    fields: epayNotifyFields({ pid: C_PID, out_trade_no: orderId, money: '12.30', ...tweaks.fields }),
    ...(tweaks.signature ? { signature: tweaks.signature } : {}),
    ...(tweaks.method ? { method: tweaks.method } : {}),
  });
}

function expectSuccessReply(channel: Channel, answer: Answer): void {
  expect(answer.status).toBe(200);
  expect(answer.text).toBe(channel === 'channel_b' ? '' : 'success');
}

function expectFailureReply(channel: Channel, answer: Answer): void {
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(answer.status).toBeLessThan(500);
  if (channel === 'channel_b')
    expect(answer.json).toMatchObject({ code: 'FAIL', message: expect.any(String) });
  else expect(answer.text).toBe('fail');
}

async function expectUnchanged(orderId: string): Promise<void> {
  const order = await storedOrder(orderId);
  expect(order?.status).toBe('pending');
  expect(order?.paid_at).toBeUndefined();
  expect(await paidEvents(log, orderId)).toBe(0);
}

describe('order creation on each channel', () => {
  it('channel_a precreates through the SDK and stores qr_code, with our notify URL', async () => {
    const answer = await placeOrder('channel_a');
    expect(answer.status).toBe(201);
    expect(answer.json.data).toMatchObject({ provider: 'channel_a', status: 'pending', pay_url: null });
    expect(answer.json.data.qr_code).toBe('https://qr.alipay.com/bax08431ffakeqrcode');
    const sent = alipay.receivedParams().at(-1)!;
    expect(sent.notify_url).toBe(`${NOTIFY_BASE}/channel_a/callback`);
    expect(JSON.parse(sent.biz_content!)).toMatchObject({
      out_trade_no: answer.json.data.id,
      total_amount: '12.30',
    });
  });

  it('channel_b places a Native order and stores code_url as qr_code', async () => {
    const answer = await placeOrder('channel_b');
    expect(answer.status).toBe(201);
    expect(answer.json.data.qr_code).toBe('weixin://wxpay/bizpayurl?pr=fake0001');
    const sent = JSON.parse(wechatpay.requests.at(-1)!.body);
    expect(sent).toMatchObject({
      out_trade_no: answer.json.data.id,
      notify_url: `${NOTIFY_BASE}/channel_b/callback`,
      amount: { total: 1230, currency: 'CNY' },
    });
  });

  it('channel_c calls mapi.php and stores qrcode and the aggregator trade number', async () => {
    const answer = await placeOrder('channel_c');
    expect(answer.status).toBe(201);
    expect(answer.json.data).toMatchObject({
      qr_code: 'weixin://wxpay/bizpayurl?pr=fakeEpay',
      trade_no: '2024010112000012345',
    });
    const sent = epay.receivedParams().at(-1)!;
    expect(sent).toMatchObject({
      pid: C_PID,
      money: '12.30',
      type: 'wxpay',
      notify_url: `${NOTIFY_BASE}/channel_c/callback`,
      clientip: '203.0.113.7',
    });
  });

  it('lists every channel as a registered gateway', async () => {
    const answer = await call('GET', '/api/v1/payment-gateways');
    expect(answer.json.data).toEqual(['manual', 'mock', 'channel_a', 'channel_b', 'channel_c']);
  });
});

describe.each(['channel_a', 'channel_b', 'channel_c'] as const)('%s callback', (channel) => {
  it('shows how to pay only while the order is pending: a paid order has no pay_url or qr_code', async () => {
    // Prepare
    const order = (await placeOrder(channel)).json.data;
    expect(order.pay_url ?? order.qr_code).toEqual(expect.any(String));

    // Act
    expectSuccessReply(channel, await deliverCallback(channel, callbackFor(channel, order.id)));
    const paid = await call('GET', `/api/v1/orders/${order.id}`, { headers: alice.headers });

    // Assess
    expect(paid.json.data).toMatchObject({ status: 'paid', pay_url: null, qr_code: null });
  });

  it('settles the order on a valid callback and records the channel trade number', async () => {
    // Prepare
    const order = (await placeOrder(channel)).json.data;

    // Act
    const answer = await deliverCallback(channel, callbackFor(channel, order.id));

    // Assess
    expectSuccessReply(channel, answer);
    const stored = await storedOrder(order.id);
    expect(stored).toMatchObject({ status: 'paid', paid_via: 'callback' });
    const expectedTradeNo = {
      channel_a: '2024010122001400000000000001',
      channel_b: '1217752501201407033233368018',
      channel_c: '2024010112000012345',
    }[channel];
    expect(stored?.trade_no).toBe(expectedTradeNo);
    expect(await paidEvents(log, order.id)).toBe(1);
    const read = await call('GET', `/api/v1/orders/${order.id}`, { headers: alice.headers });
    expect(read.json.data).toMatchObject({ status: 'paid', trade_no: expectedTradeNo });
  });

  const forgeries: Array<[string, (id: string) => CallbackRequest]> = [
    [
      'a forged signature',
      (id) => callbackFor(channel, id, { signature: channel === 'channel_c' ? '0'.repeat(32) : 'Zm9yZ2Vk' }),
    ],
    [
      'a signature by another key',
      (id) =>
        channel === 'channel_c'
          ? callbackFor(channel, id, { key: 'not-our-key' })
          : callbackFor(channel, id, { signedBy: 'stranger' }),
    ],
    [
      'another merchant',
      (id) =>
        channel === 'channel_a'
          ? callbackFor(channel, id, { fields: { app_id: '2021000000000999' } })
          : channel === 'channel_b'
            ? callbackFor(channel, id, { transaction: { mchid: '1230000999' } })
            : callbackFor(channel, id, { fields: { pid: '1002' } }),
    ],
    [
      'a wrong amount',
      (id) =>
        channel === 'channel_a'
          ? callbackFor(channel, id, { fields: { total_amount: '12.31' } })
          : channel === 'channel_b'
            ? callbackFor(channel, id, { transaction: { amount: { total: 1231, currency: 'CNY' } } })
            : callbackFor(channel, id, { fields: { money: '1.23' } }),
    ],
  ];
  it.each(forgeries)('answers failure and changes nothing for %s', async (_case, build) => {
    const order = (await placeOrder(channel)).json.data;
    const answer = await deliverCallback(channel, build(order.id));
    expectFailureReply(channel, answer);
    await expectUnchanged(order.id);
  });

  it('writes the storage grant in the settlement, once for 20 duplicate deliveries, and puts it in order.paid', async () => {
    // Prepare
    const buyer = await createTestAccount();
    const placed = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: storagePlanId, provider: channel },
    });
    const orderId = placed.json.data.id as string;
    const request = callbackFor(channel, orderId);

    // Act
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliverCallback(channel, request)));

    // Assess
    for (const answer of answers) expectSuccessReply(channel, answer);
    const grant = (await table.get(usageKey(buyer.account.id)))?.grant;
    expect(grant).toMatchObject({ order_id: orderId, plan_id: storagePlanId, quota_bytes: 5 * 1024 ** 2 });
    expect((await storedOrder(orderId))?.grant).toEqual(grant);
    await drainOutbox();
    const events = log.filter(
      (line) => line.message === 'event' && (line.detail as { order_id?: string })?.order_id === orderId,
    );
    expect(events).toHaveLength(1);
    expect((events[0]!.detail as { grant: unknown }).grant).toMatchObject({
      plan_id: storagePlanId,
      quota_bytes: 5 * 1024 ** 2,
      expires_at: expect.any(String),
    });
  });

  it('acknowledges a verified non-paid status without changing the order', async () => {
    const order = (await placeOrder(channel)).json.data;
    const notPaid =
      channel === 'channel_a'
        ? callbackFor(channel, order.id, { fields: { trade_status: 'WAIT_BUYER_PAY' } })
        : channel === 'channel_b'
          ? callbackFor(channel, order.id, { transaction: { trade_state: 'NOTPAY' } })
          : callbackFor(channel, order.id, { fields: { trade_status: 'WAIT_BUYER_PAY' } });
    const answer = await deliverCallback(channel, notPaid);
    expect(answer.status).toBe(200);
    await expectUnchanged(order.id);
  });

  it("refuses a valid callback naming another provider's order", async () => {
    // Prepare: same amount, but the order was placed with another channel.
    const other = channel === 'channel_a' ? 'channel_b' : 'channel_a';
    const order = (await placeOrder(other)).json.data;

    // Act
    const answer = await deliverCallback(channel, callbackFor(channel, order.id));

    // Assess
    expectFailureReply(channel, answer);
    await expectUnchanged(order.id);
  });

  it('refuses a callback for an unknown order', async () => {
    const answer = await deliverCallback(channel, callbackFor(channel, 'NOSUCHORDER000000000000000000001'));
    expectFailureReply(channel, answer);
  });

  it('settles 20 concurrent duplicate deliveries exactly once, answering success to each', async () => {
    // Prepare
    const order = (await placeOrder(channel)).json.data;
    const request = callbackFor(channel, order.id);

    // Act
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliverCallback(channel, request)));

    // Assess
    for (const answer of answers) expectSuccessReply(channel, answer);
    expect(await paidEvents(log, order.id)).toBe(1);
    expect((await storedOrder(order.id))?.status).toBe('paid');
    // and a late duplicate still answers success without a second event
    expectSuccessReply(channel, await deliverCallback(channel, request));
    expect(await paidEvents(log, order.id)).toBe(1);
  });

  it('records a callback for a cancelled order as paid and flags it', async () => {
    // Prepare
    const order = (await placeOrder(channel)).json.data;
    await call('POST', `/api/v1/orders/${order.id}/cancel`, { headers: alice.headers });

    // Act
    const answer = await deliverCallback(channel, callbackFor(channel, order.id));

    // Assess
    expectSuccessReply(channel, answer);
    expect(await storedOrder(order.id)).toMatchObject({
      status: 'paid',
      late_payment: true,
      status_before_payment: 'cancelled',
    });
    expect(await paidEvents(log, order.id)).toBe(1);
  });

  it('records a callback for an expired order as paid and flags it', async () => {
    const order = (await placeOrder(channel)).json.data;
    await table.update(orderKey(order.id), {
      UpdateExpression: 'SET deadline_ms = :past',
      ExpressionAttributeValues: { ':past': Date.now() - 1000 },
    });
    expectSuccessReply(channel, await deliverCallback(channel, callbackFor(channel, order.id)));
    const admins = await call('GET', '/api/v1/admin/orders?limit=100', { headers: admin.headers });
    const seen = admins.json.data.items.find((item: { id: string }) => item.id === order.id);
    expect(seen).toMatchObject({ status: 'paid', late_payment: true, status_before_payment: 'expired' });
  });

  it('cannot be confirmed by its owner or by an administrator write-off (403)', async () => {
    const order = (await placeOrder(channel)).json.data;
    expect((await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers })).status).toBe(
      403,
    );
    expect(
      (await call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers })).status,
    ).toBe(403);
    await expectUnchanged(order.id);
  });
});

describe('channel_b callback specifics', () => {
  it('refuses a stale timestamp (over 5 minutes) and a tampered ciphertext', async () => {
    const order = (await placeOrder('channel_b')).json.data;
    for (const tweaks of [{ timestamp: nowSeconds() - 301 }, { corruptCiphertext: true }]) {
      expectFailureReply(
        'channel_b',
        await deliverCallback('channel_b', callbackFor('channel_b', order.id, tweaks)),
      );
    }
    await expectUnchanged(order.id);
  });

  it('accepts the neutral Channel-B-* header names', async () => {
    const order = (await placeOrder('channel_b')).json.data;
    const answer = await deliverCallback(
      'channel_b',
      callbackFor('channel_b', order.id, { headerStyle: 'neutral' }),
    );
    expectSuccessReply('channel_b', answer);
    expect((await storedOrder(order.id))?.status).toBe('paid');
  });
});

describe('channel_c callback specifics', () => {
  it.each([
    ['1', 'GET'],
    ['1.0', 'POST'],
    ['1.00', 'GET'],
  ] as const)('treats money %s as 1 yuan (%s notify)', async (money, method) => {
    const order = (await placeOrder('channel_c', yuanPlanId)).json.data;
    const answer = await deliverCallback(
      'channel_c',
      callbackFor('channel_c', order.id, { fields: { money }, method }),
    );
    expectSuccessReply('channel_c', answer);
    expect((await storedOrder(order.id))?.status).toBe('paid');
  });
});

describe('gateway failures', () => {
  let broken: LoopbackServer;
  afterAll(async () => {
    await broken?.close();
  });

  it('answers 502 "payment channel unavailable" and marks the order failed when the gateway fails', async () => {
    // Prepare: point channel_c at a mapi.php that answers a channel error.
    broken = await startLoopbackServer(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: -2, msg: 'channel down' }),
    }));
    await call('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: { channel_c: { api_url: `${broken.baseUrl}/mapi.php` }, current_password: admin.password },
    });

    // Act
    const answer = await placeOrder('channel_c');

    // Assess
    expect(answer.status).toBe(502);
    expect(answer.json).toMatchObject({ code: 502, message: 'payment channel unavailable' });
    expect(answer.text).not.toContain(C_KEY);
    const orderId = answer.json.data.order_id;
    const read = await call('GET', `/api/v1/orders/${orderId}`, { headers: alice.headers });
    expect(read.json.data.status).toBe('failed');

    // and money that arrives anyway is recorded, flagged
    const late = await deliverCallback('channel_c', callbackFor('channel_c', orderId));
    expectSuccessReply('channel_c', late);
    expect(await storedOrder(orderId)).toMatchObject({
      status: 'paid',
      late_payment: true,
      status_before_payment: 'failed',
    });
  });

  it('falls back to a signed submit.php link when api_url is cleared', async () => {
    await call('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: { channel_c: { api_url: '' }, current_password: admin.password },
    });
    const answer = await placeOrder('channel_c');
    expect(answer.status).toBe(201);
    const payUrl = new URL(answer.json.data.pay_url);
    expect(`${payUrl.origin}${payUrl.pathname}`).toBe(`${epay.baseUrl}/submit.php`);
    expect(payUrl.searchParams.get('out_trade_no')).toBe(answer.json.data.id);
    expect(payUrl.searchParams.get('sign')).toMatch(/^[0-9a-f]{32}$/);
    expect(answer.json.data.qr_code).toBeNull();
  });
});
