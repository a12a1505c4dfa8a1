// channel_c (EPay V1 MD5): known-answer signatures, submit/mapi order creation, notification verification.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelCSettings } from '#lib/billing/channels/channel-c.ts';
import { createChannelC, signEpayParams } from '#lib/billing/channels/channel-c.ts';
import { ChannelConfigError, ChannelRequestError } from '#lib/billing/channels/errors.ts';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import type { FakeEpay } from '#test/support/fake-gateways/index.ts';
import {
  buildEpayNotify,
  epayMd5Sign,
  epayNotifyFields,
  startFakeEpay,
  startLoopbackServer,
} from '#test/support/fake-gateways/index.ts';

const PID = '1001';
const KEY = 'abc123';

function settings(overrides: Partial<ChannelCSettings> = {}): ChannelCSettings {
  return { pid: PID, key: KEY, gatewayUrl: 'https://pay.example.com/', payType: 'alipay', ...overrides };
}

function notify(fields: Record<string, string> = {}, key = KEY): CallbackRequest {
  return buildEpayNotify({ key, fields: epayNotifyFields(fields) });
}

const orderInput = {
  outTradeNo: 'ORDER123',
  amountCents: 100,
  subject: 'VIP',
  notifyUrl: 'https://example.com/notify',
  returnUrl: 'https://example.com/return',
};

describe('signEpayParams known answers', () => {
  it('reproduces the docs/PAYMENTS-GUIDE.md 3.4 request vector, skipping the empty param', () => {
    // Prepare
    const params = {
      pid: '1001',
      type: 'alipay',
      out_trade_no: 'ORDER123',
      notify_url: 'https://example.com/notify',
      return_url: 'https://example.com/return',
      name: 'VIP',
      money: '1.00',
      param: '',
    };

    // Act
    const signature = signEpayParams(params, KEY);

    // Assess
    expect(signature).toBe('d7347f51349f54063251ce6b7f22966d');
  });

  it('reproduces the docs/PAYMENTS-GUIDE.md 3.5 notification vector', () => {
    // Prepare
    const params = {
      pid: '1001',
      trade_no: '2024010112000012345',
      out_trade_no: 'ORDER123',
      type: 'alipay',
      name: 'VIP',
      money: '1',
      trade_status: 'TRADE_SUCCESS',
      sign_type: 'MD5',
    };

    // Act
    const signature = signEpayParams(params, KEY);

    // Assess
    expect(signature).toBe('77debb0f8a88d8459203d6757fd803e5');
  });
});

describe('createChannelC settings', () => {
  it.each([
    ['pid', { pid: '' }],
    ['key', { key: '' }],
    ['gatewayUrl', { gatewayUrl: '' }],
    ['gatewayUrl', { gatewayUrl: 'ftp://pay.example.com/' }],
    ['apiUrl', { apiUrl: 'not a url' }],
    ['submitUrl', { submitUrl: 'javascript:alert(1)' }],
  ])('refuses a bad %s with a ChannelConfigError naming it', (field, overrides) => {
    // Act
    const attempt = () => createChannelC(settings(overrides));

    // Assess
    expect(attempt).toThrow(ChannelConfigError);
    expect(attempt).toThrow(new RegExp(`^${field}: `));
  });
});

describe('channel_c createOrder', () => {
  let epay: FakeEpay;

  beforeAll(async () => {
    epay = await startFakeEpay({ pid: PID, key: KEY });
  });

  afterAll(async () => {
    await epay.close();
  });

  it('builds a signed submit.php URL when no api url is configured', async () => {
    // Prepare
    const adapter = createChannelC(settings());

    // Act
    const order = await adapter.createOrder(orderInput);

    // Assess
    const url = new URL(order.payUrl!);
    expect(`${url.origin}${url.pathname}`).toBe('https://pay.example.com/submit.php');
    expect(url.searchParams.get('sign')).toBe('d7347f51349f54063251ce6b7f22966d');
    expect(url.searchParams.get('sign_type')).toBe('MD5');
    expect(url.searchParams.get('money')).toBe('1.00');
  });

  it('uses the configured submit url as is', async () => {
    // Prepare
    const adapter = createChannelC(settings({ submitUrl: 'https://cashier.example.com/pay/submit' }));

    // Act
    const order = await adapter.createOrder(orderInput);

    // Assess
    expect(order.payUrl).toMatch(/^https:\/\/cashier\.example\.com\/pay\/submit\?/);
  });

  it('posts to mapi.php and returns the qr code and trade number', async () => {
    // Prepare
    const adapter = createChannelC(settings({ apiUrl: epay.baseUrl }));

    // Act
    const order = await adapter.createOrder({ ...orderInput, clientIp: '203.0.113.9' });

    // Assess
    expect(order).toEqual({ qrCode: 'weixin://wxpay/bizpayurl?pr=fakeEpay', tradeNo: '2024010112000012345' });
    const sent = epay.receivedParams().at(-1)!;
    expect(sent).toMatchObject({ pid: PID, clientip: '203.0.113.9', money: '1.00', sign_type: 'MD5' });
    expect(sent.sign).toBe(epayMd5Sign(sent, KEY));
  });

  it('returns the pay url when mapi.php answers with one', async () => {
    // Prepare
    const payUrlEpay = await startFakeEpay({
      pid: PID,
      key: KEY,
      answer: () => ({ code: 1, trade_no: 'T1', payurl: 'https://pay.example.com/pay/T1' }),
    });
    const adapter = createChannelC(settings({ apiUrl: payUrlEpay.mapiUrl }));

    // Act
    const order = await adapter.createOrder(orderInput);
    await payUrlEpay.close();

    // Assess
    expect(order).toEqual({ payUrl: 'https://pay.example.com/pay/T1', tradeNo: 'T1' });
  });

  it('throws ChannelRequestError when mapi.php rejects our signature', async () => {
    // Prepare
    const adapter = createChannelC(settings({ apiUrl: epay.mapiUrl, key: 'wrong-key' }));

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ChannelRequestError);
    await expect(attempt).rejects.toMatchObject({ detail: '-1' });
  });

  it('throws ChannelRequestError when mapi.php answers an HTTP error', async () => {
    // Prepare
    const adapter = createChannelC(settings({ apiUrl: `${epay.baseUrl}/missing.php` }));

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'ChannelRequestError', detail: '404' });
  });

  it('throws ChannelRequestError when mapi.php answers something that is not JSON', async () => {
    // Prepare
    const htmlServer = await startLoopbackServer(() => ({ status: 200, body: '<html>maintenance</html>' }));
    const adapter = createChannelC(settings({ apiUrl: `${htmlServer.baseUrl}/mapi.php` }));

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toThrow('channel_c: mapi.php answer is not JSON');
    await htmlServer.close();
  });
});

describe('channel_c verifyCallback', () => {
  const adapter = createChannelC(settings());

  it('reports a verified TRADE_SUCCESS as paid with cents and the platform trade number', () => {
    // Act
    const verdict = adapter.verifyCallback(notify());

    // Assess
    expect(verdict).toEqual({
      kind: 'paid',
      outTradeNo: 'ORDER123',
      amountCents: 100,
      tradeNo: '2024010112000012345',
    });
    expect(adapter.acknowledge(verdict)).toEqual({
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: 'success',
    });
  });

  it('verifies the docs/PAYMENTS-GUIDE.md 3.5 notification query exactly as the platform sends it', () => {
    // Prepare
    const rawQuery =
      'pid=1001&trade_no=2024010112000012345&out_trade_no=ORDER123&type=alipay&name=VIP&money=1' +
      '&trade_status=TRADE_SUCCESS&sign=77debb0f8a88d8459203d6757fd803e5&sign_type=MD5';

    // Act
    const verdict = adapter.verifyCallback({
      method: 'GET',
      headers: {},
      rawBody: Buffer.alloc(0),
      rawQuery,
    });

    // Assess
    expect(verdict).toMatchObject({ kind: 'paid', amountCents: 100 });
  });

  it('reads `1` and `1.00` as the same 100 cents', () => {
    // Act
    const whole = adapter.verifyCallback(notify({ money: '1' }));
    const twoDecimals = adapter.verifyCallback(notify({ money: '1.00' }));

    // Assess
    expect(whole).toMatchObject({ kind: 'paid', amountCents: 100 });
    expect(twoDecimals).toMatchObject({ kind: 'paid', amountCents: 100 });
  });

  it('rejects a signed money with three decimals', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ money: '1.001' }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'money is not a valid amount' });
  });

  it('accepts an upper-case hex sign (case is normalised before the constant-time compare)', () => {
    // Prepare
    const fields = epayNotifyFields();
    const upper = epayMd5Sign(fields, KEY).toUpperCase();

    // Act
    const verdict = adapter.verifyCallback(buildEpayNotify({ key: KEY, fields, signature: upper }));

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it('accepts the same notification POSTed as a form', () => {
    // Act
    const verdict = adapter.verifyCallback(buildEpayNotify({ key: KEY, method: 'POST' }));

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it('verifies with or without an empty param field', () => {
    // Act
    const withEmpty = adapter.verifyCallback(notify({ param: '' }));
    const withValue = adapter.verifyCallback(notify({ param: 'x+y%z' }));

    // Assess
    expect(withEmpty.kind).toBe('paid');
    expect(withValue.kind).toBe('paid');
  });

  it('rejects a notification signed with another key', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({}, 'other-key'));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a tampered money value', () => {
    // Prepare
    const request = notify();
    const query = new URLSearchParams(request.rawQuery);
    query.set('money', '0.01');

    // Act
    const verdict = adapter.verifyCallback({ ...request, rawQuery: query.toString() });

    // Assess
    expect(verdict.kind).toBe('rejected');
  });

  it.each([
    ['a forged digest', '0123456789abcdef0123456789abcdef'],
    ['a truncated digest', 'd7347f51349f5406'],
    ['non-hex junk of the right length', 'zz347f51349f54063251ce6b7f22966d'],
  ])('rejects %s', (_label, signature) => {
    // Act
    const verdict = adapter.verifyCallback(buildEpayNotify({ key: KEY, signature }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a genuine notification for another pid', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ pid: '2002' }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'pid is not ours' });
  });

  it('rejects a notification without sign and answers fail', () => {
    // Act
    const verdict = adapter.verifyCallback(buildEpayNotify({ key: KEY, omitSignature: true }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'missing signature' });
    expect(adapter.acknowledge(verdict)).toMatchObject({ status: 400, body: 'fail' });
  });

  it('ignores a verified status other than TRADE_SUCCESS', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ trade_status: 'WAIT_BUYER_PAY' }));

    // Assess
    expect(verdict).toEqual({
      kind: 'ignored',
      outTradeNo: 'ORDER123',
      reason: 'trade_status WAIT_BUYER_PAY',
    });
  });
});
