// Hostile callbacks for each channel (docs/SPEC.md 6, docs/DESIGN.md 7), beyond payments/channels.test.ts (forged and
// foreign signatures, foreign merchant, wrong amount, stale channel_b timestamp): randomized forgeries of a
// valid notification, replays after settlement, a replay aimed at another order, and a channel_b
// notification held back past its 5-minute window. Accepted: zero.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { orderKey } from '#lib/billing/orders.ts';
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
  startFakeChannels,
  wechatpayTransaction,
} from '#test/support/fake-gateways/index.ts';
import { hostileString, SEED } from '#test/support/hostile-fuzz.ts';
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

const FORGERY_RUNS = 20;

const appKeys = generateTestKeyPair();
const alipayKeys = generateTestKeyPair();
const merchantKeys = generateTestKeyPair();
const platformKeys = generateTestKeyPair();

const log = captureLog();
let table: Table;
let admin: TestAccount;
let alice: TestAccount;
let planId: string;
let gateways: [FakeAlipayGateway, FakeWechatpay, FakeEpay];

type Channel = 'channel_a' | 'channel_b' | 'channel_c';
const CHANNELS: Channel[] = ['channel_a', 'channel_b', 'channel_c'];

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, alice] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  const channels = await startFakeChannels({
    app: appKeys,
    alipay: alipayKeys,
    merchant: merchantKeys,
    platform: platformKeys,
  });
  gateways = [channels.alipay, channels.wechatpay, channels.epay];
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
});

afterAll(async () => {
  await Promise.all((gateways ?? []).map((gateway) => gateway?.close()));
});

async function placeOrder(provider: Channel): Promise<string> {
  const answer = await call('POST', '/api/v1/orders', {
    headers: alice.headers,
    body: { plan_id: planId, provider },
  });
  expect(answer.status).toBe(201);
  return answer.json.data.id;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The notification each channel would send for this order, signed with the right key. */
function validCallback(channel: Channel, orderId: string, timestamp = nowSeconds()): CallbackRequest {
  if (channel === 'channel_a') {
    return buildAlipayNotify({
      alipayPrivateKey: alipayKeys.privateKey,
      fields: alipayNotifyFields({ out_trade_no: orderId }),
    });
  }
  if (channel === 'channel_b') {
    return buildWechatpayCallback({
      platformPrivateKey: platformKeys.privateKey,
      platformSerial: B_PLATFORM_SERIAL,
      apiV3Key: B_API_V3_KEY,
      timestamp,
      transaction: wechatpayTransaction({ out_trade_no: orderId }),
    }).request;
  }
  return buildEpayNotify({
    key: C_KEY,
    fields: epayNotifyFields({ pid: C_PID, out_trade_no: orderId, money: '12.30' }),
  });
}

function accepted(channel: Channel, answer: Answer): boolean {
  return answer.status === 200 && (channel === 'channel_b' || answer.text === 'success');
}

async function expectPending(orderId: string): Promise<void> {
  const order = await table.get(orderKey(orderId));
  expect(order?.status).toBe('pending');
  expect(order?.paid_at).toBeUndefined();
  expect(await paidEvents(log, orderId)).toBe(0);
}

/** The signed fields of a form channel (channel_a posts a form, channel_c sends a query). */
function formOf(request: CallbackRequest): URLSearchParams {
  return new URLSearchParams(
    request.rawBody.length > 0 ? request.rawBody.toString('utf8') : request.rawQuery,
  );
}

function withForm(request: CallbackRequest, form: URLSearchParams): CallbackRequest {
  return request.rawBody.length > 0
    ? { ...request, rawBody: Buffer.from(form.toString()) }
    : { ...request, rawQuery: form.toString() };
}

/**
 * One tampering of a valid notification that changes what was signed, or the signature, or the proof
 * around it (channel_b's timestamp, nonce and signature headers).
 */
type Tamper =
  | { kind: 'field'; pick: number; value: string }
  | { kind: 'signature'; value: string }
  | { kind: 'byte'; at: number; xor: number }
  | { kind: 'header'; pick: number; value: string };

const tamper: fc.Arbitrary<Tamper> = fc.oneof(
  fc.record({ kind: fc.constant('field' as const), pick: fc.nat(), value: hostileString }),
  fc.record({
    kind: fc.constant('signature' as const),
    value: fc.oneof(fc.base64String({ maxLength: 400 }), fc.stringMatching(/^[0-9a-f]{32}$/), hostileString),
  }),
  fc.record({ kind: fc.constant('byte' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('header' as const), pick: fc.nat(), value: hostileString }),
);

// What each channel signs (channel_a: all but sign and sign_type; channel_c: all but those and empties).
const SIGNED_FIELDS: Record<'channel_a' | 'channel_c', string[]> = {
  channel_a: Object.keys(alipayNotifyFields()),
  channel_c: Object.keys(epayNotifyFields()),
};
const B_PROOF_HEADERS = ['wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce'];

function tampered(channel: Channel, valid: CallbackRequest, change: Tamper): CallbackRequest | undefined {
  if (channel === 'channel_b') {
    if (change.kind === 'byte') {
      const body = Buffer.from(valid.rawBody);
      body[change.at % body.length]! ^= change.xor;
      return { ...valid, rawBody: body };
    }
    const header =
      change.kind === 'signature'
        ? 'wechatpay-signature'
        : B_PROOF_HEADERS[change.pick % B_PROOF_HEADERS.length]!;
    if (valid.headers[header] === change.value) return undefined;
    return { ...valid, headers: { ...valid.headers, [header]: change.value } };
  }
  const form = formOf(valid);
  if (change.kind === 'signature') {
    if (form.get('sign') === change.value) return undefined;
    form.set('sign', change.value);
    return withForm(valid, form);
  }
  if (change.kind === 'byte') {
    // Flip a bit pattern in the signature's bytes (not its text: base64 padding bits and hex case are
    // not part of the signature, so changing them forges nothing).
    const encoding = channel === 'channel_a' ? 'base64' : 'hex';
    const bytes = Buffer.from(form.get('sign') ?? '', encoding);
    bytes[change.at % bytes.length]! ^= change.xor;
    form.set('sign', bytes.toString(encoding));
    return withForm(valid, form);
  }
  const fields = SIGNED_FIELDS[channel];
  const field = fields[change.pick % fields.length]!;
  if (form.get(field) === change.value) return undefined;
  form.set(field, change.value);
  return withForm(valid, form);
}

describe.each(CHANNELS)(`%s callbacks under attack (seed ${SEED})`, (channel) => {
  it('accepts none of a randomized set of tampered notifications', async () => {
    // Prepare: one pending order and its genuine notification, never delivered as is.
    const orderId = await placeOrder(channel);
    const valid = validCallback(channel, orderId);
    let acceptances = 0;

    // Act
    await fc.assert(
      fc.asyncProperty(tamper, async (change) => {
        const forged = tampered(channel, valid, change);
        if (!forged) return;
        const answer = await deliverCallback(channel, forged);
        if (accepted(channel, answer)) acceptances += 1;
        expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
        expect(answer.status, answer.text).toBeLessThan(500);
      }),
      { numRuns: FORGERY_RUNS, seed: SEED, endOnFailure: true },
    );

    // Assess
    expect(acceptances).toBe(0);
    await expectPending(orderId);
  });

  it('settles once; a replay after settlement changes nothing and settles no other order', async () => {
    // Prepare: an order settled by its genuine notification, and a second order of the same amount.
    const first = await placeOrder(channel);
    const notice = validCallback(channel, first);
    expect(accepted(channel, await deliverCallback(channel, notice))).toBe(true);
    const settled = await table.get(orderKey(first));
    const second = await placeOrder(channel);

    // Act: the same notification again, later, and then re-aimed at the second order (channel_b's order
    // id travels encrypted and authenticated, out of an attacker's reach: there the replay is all it has).
    const replays = [await deliverCallback(channel, notice), await deliverCallback(channel, notice)];
    const form = formOf(notice);
    form.set('out_trade_no', second);
    const aimed =
      channel === 'channel_b' ? undefined : await deliverCallback(channel, withForm(notice, form));

    // Assess: the settled order is exactly as it was; the second is untouched.
    for (const replay of replays) expect(replay.status).toBeLessThan(500);
    expect(await table.get(orderKey(first))).toEqual(settled);
    expect(settled).toMatchObject({ status: 'paid', amount_cents: 1230 });
    expect(await paidEvents(log, first)).toBe(1);
    if (aimed) expect(accepted(channel, aimed)).toBe(false);
    await expectPending(second);
  });
});

describe('channel_b notifications held back', () => {
  afterAll(() => {
    vi.useRealTimers();
  });

  it('refuses a genuine notification delivered more than 5 minutes after it was signed', async () => {
    // Prepare: captured now, replayed six minutes later.
    const orderId = await placeOrder('channel_b');
    const captured = validCallback('channel_b', orderId);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6 * 60 * 1000 });

    // Act
    const answer = await deliverCallback('channel_b', captured);
    vi.useRealTimers();

    // Assess
    expect(accepted('channel_b', answer)).toBe(false);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    await expectPending(orderId);
  });
});
