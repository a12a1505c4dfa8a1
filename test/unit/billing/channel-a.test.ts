// channel_a (Alipay): settings validation, precreate against a fake gateway, notification verification.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelASettings } from '#lib/billing/channels/channel-a.ts';
import { createChannelA } from '#lib/billing/channels/channel-a.ts';
import { ChannelConfigError, ChannelRequestError } from '#lib/billing/channels/errors.ts';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import type { FakeAlipayGateway } from '#test/support/fake-gateways/index.ts';
import {
  alipayNotifyFields,
  buildAlipayNotify,
  generateTestKeyPair,
  startFakeAlipayGateway,
} from '#test/support/fake-gateways/index.ts';

const APP_ID = '2021000000000000';
const appKeys = generateTestKeyPair();
const alipayKeys = generateTestKeyPair();
const strangerKeys = generateTestKeyPair();

function settings(overrides: Partial<ChannelASettings> = {}): ChannelASettings {
  return {
    appId: APP_ID,
    privateKey: appKeys.privateKeyPkcs8Pem,
    publicKey: alipayKeys.publicKeyPem,
    ...overrides,
  };
}

function notify(fields: Record<string, string> = {}, signer = alipayKeys.privateKey): CallbackRequest {
  return buildAlipayNotify({ alipayPrivateKey: signer, fields: alipayNotifyFields(fields) });
}

describe('createChannelA settings', () => {
  it.each([
    ['PKCS#8 PEM', appKeys.privateKeyPkcs8Pem],
    ['PKCS#1 PEM', appKeys.privateKeyPkcs1Pem],
    ['bare base64 body', appKeys.privateKeyBase64],
    ['PEM with escaped line breaks', appKeys.privateKeyPkcs1Pem.replaceAll('\n', '\\n')],
  ])('accepts the private key as %s', (_label, privateKey) => {
    // Act
    const adapter = createChannelA(settings({ privateKey }));

    // Assess
    expect(adapter.provider).toBe('channel_a');
  });

  it('accepts the Alipay public key as a bare base64 body', () => {
    // Act
    const adapter = createChannelA(settings({ publicKey: alipayKeys.publicKeyBase64 }));

    // Assess
    expect(adapter.provider).toBe('channel_a');
  });

  it('names the field but never its value when a key does not parse', () => {
    // Prepare
    const secretLookingJunk = 'not-a-key-SECRET-VALUE';

    // Act
    const attempt = () => createChannelA(settings({ privateKey: secretLookingJunk }));

    // Assess
    expect(attempt).toThrow(ChannelConfigError);
    expect(attempt).toThrow(/^privateKey: /);
    expect(attempt).not.toThrow(/SECRET-VALUE/);
  });

  it('refuses a missing app id or public key', () => {
    // Act + Assess
    expect(() => createChannelA(settings({ appId: '' }))).toThrow(/appId/);
    expect(() => createChannelA(settings({ publicKey: '' }))).toThrow(/publicKey/);
  });
});

describe('channel_a createOrder', () => {
  let gateway: FakeAlipayGateway;
  let forgingGateway: FakeAlipayGateway;

  beforeAll(async () => {
    gateway = await startFakeAlipayGateway({
      alipayPrivateKey: alipayKeys.privateKey,
      appPublicKey: appKeys.publicKey,
    });
    forgingGateway = await startFakeAlipayGateway({
      alipayPrivateKey: alipayKeys.privateKey,
      appPublicKey: appKeys.publicKey,
      answerSignedBy: strangerKeys.privateKey,
    });
  });

  afterAll(async () => {
    await gateway.close();
    await forgingGateway.close();
  });

  it('returns the qr code from a verified precreate answer and signs the request', async () => {
    // Prepare
    const now = new Date('2024-01-01T04:00:00Z');
    const adapter = createChannelA(settings({ gatewayUrl: gateway.gatewayUrl, clock: () => now }));

    // Act
    const order = await adapter.createOrder({
      outTradeNo: 'ORDER0001',
      amountCents: 1230,
      subject: 'VIP plan',
      notifyUrl: 'https://api.example.com/api/v1/payments/channel_a/callback',
      expiresAt: new Date('2024-01-01T04:30:00Z'),
    });

    // Assess
    expect(order).toEqual({ qrCode: 'https://qr.alipay.com/bax08431ffakeqrcode' });
    const sent = gateway.receivedParams().at(-1)!;
    expect(sent.method).toBe('alipay.trade.precreate');
    expect(sent.app_id).toBe(APP_ID);
    expect(sent.sign_type).toBe('RSA2');
    expect(sent.timestamp).toBe('2024-01-01 12:00:00');
    expect(sent.notify_url).toBe('https://api.example.com/api/v1/payments/channel_a/callback');
    expect(JSON.parse(sent.biz_content!)).toEqual({
      out_trade_no: 'ORDER0001',
      total_amount: '12.30',
      subject: 'VIP plan',
      timeout_express: '30m',
    });
  });

  it('throws ChannelRequestError when the answer is signed by another key', async () => {
    // Prepare
    const adapter = createChannelA(settings({ gatewayUrl: forgingGateway.gatewayUrl }));

    // Act
    const attempt = adapter.createOrder({
      outTradeNo: 'ORDER0002',
      amountCents: 100,
      subject: 'VIP',
      notifyUrl: 'https://api.example.com/notify',
    });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ChannelRequestError);
    await expect(attempt).rejects.toMatchObject({ detail: 'AlipayRequestError' });
  });

  it('throws ChannelRequestError when the gateway refuses our request signature', async () => {
    // Prepare: our private key does not match the app public key the gateway holds.
    const adapter = createChannelA(
      settings({ gatewayUrl: gateway.gatewayUrl, privateKey: strangerKeys.privateKeyPkcs8Pem }),
    );

    // Act
    const attempt = adapter.createOrder({
      outTradeNo: 'ORDER0003',
      amountCents: 100,
      subject: 'VIP',
      notifyUrl: 'https://api.example.com/notify',
    });

    // Assess
    await expect(attempt).rejects.toThrow(ChannelRequestError);
    await expect(attempt).rejects.toMatchObject({ detail: '40002/isv.invalid-signature' });
  });

  it('throws ChannelRequestError when the gateway cannot be reached', async () => {
    // Prepare
    const adapter = createChannelA(
      settings({ gatewayUrl: 'http://127.0.0.1:9/gateway.do', timeoutMs: 2000 }),
    );

    // Act
    const attempt = adapter.createOrder({
      outTradeNo: 'ORDER0004',
      amountCents: 100,
      subject: 'VIP',
      notifyUrl: 'https://api.example.com/notify',
    });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ChannelRequestError);
  });
});

describe('channel_a verifyCallback', () => {
  const adapter = createChannelA(settings());

  it('reports a verified TRADE_SUCCESS as paid with cents and the Alipay trade number', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ total_amount: '12.30' }));

    // Assess
    expect(verdict).toEqual({
      kind: 'paid',
      outTradeNo: 'ORDER0001',
      amountCents: 1230,
      tradeNo: '2024010122001400000000000001',
    });
  });

  it('treats TRADE_FINISHED as paid too', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ trade_status: 'TRADE_FINISHED', total_amount: '20' }));

    // Assess
    expect(verdict).toMatchObject({ kind: 'paid', amountCents: 2000 });
  });

  it('verifies a subject containing % and + without decoding it twice', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ subject: '订单+1% off 100%25 a+b=c&d' }));

    // Assess
    expect(verdict).toMatchObject({ kind: 'paid', outTradeNo: 'ORDER0001' });
  });

  it('verifies a body that arrived base64-encoded and was decoded by the caller', () => {
    // Prepare
    const original = notify();
    const apiGatewayBody = original.rawBody.toString('base64');

    // Act
    const verdict = adapter.verifyCallback({ ...original, rawBody: Buffer.from(apiGatewayBody, 'base64') });

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it('ignores the malformed content type and parses the form anyway', () => {
    // Prepare
    const request = { ...notify(), headers: { 'content-type': 'text/html' } };

    // Act
    const verdict = adapter.verifyCallback(request);

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it.each(['WAIT_BUYER_PAY', 'TRADE_CLOSED'])('acknowledges but ignores %s', (status) => {
    // Act
    const verdict = adapter.verifyCallback(notify({ trade_status: status }));

    // Assess
    expect(verdict).toEqual({ kind: 'ignored', outTradeNo: 'ORDER0001', reason: `trade_status ${status}` });
    expect(adapter.acknowledge(verdict)).toEqual({
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: 'success',
    });
  });

  it('rejects a tampered amount', () => {
    // Prepare
    const genuine = new URLSearchParams(notify().rawBody.toString());
    genuine.set('total_amount', '0.01');

    // Act
    const verdict = adapter.verifyCallback({ ...notify(), rawBody: Buffer.from(genuine.toString()) });

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a notification signed by another key', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({}, strangerKeys.privateKey));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a forged signature string', () => {
    // Prepare
    const request = buildAlipayNotify({
      alipayPrivateKey: alipayKeys.privateKey,
      fields: alipayNotifyFields(),
      signature: Buffer.alloc(256, 7).toString('base64'),
    });

    // Act
    const verdict = adapter.verifyCallback(request);

    // Assess
    expect(verdict.kind).toBe('rejected');
  });

  it('rejects a genuine notification for another app id', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ app_id: '2021999999999999' }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'app_id is not ours' });
  });

  it('rejects another seller when a seller id is configured', () => {
    // Prepare
    const strict = createChannelA(settings({ sellerId: '2088000000000000' }));

    // Act
    const ours = strict.verifyCallback(notify());
    const theirs = strict.verifyCallback(notify({ seller_id: '2088111111111111' }));

    // Assess
    expect(ours.kind).toBe('paid');
    expect(theirs).toEqual({ kind: 'rejected', reason: 'seller_id is not ours' });
  });

  it('rejects a notification without sign and answers fail with 400', () => {
    // Prepare
    const request = buildAlipayNotify({
      alipayPrivateKey: alipayKeys.privateKey,
      fields: alipayNotifyFields(),
      omitSignature: true,
    });

    // Act
    const verdict = adapter.verifyCallback(request);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'missing signature' });
    expect(adapter.acknowledge(verdict)).toEqual({
      status: 400,
      contentType: 'text/plain; charset=utf-8',
      body: 'fail',
    });
  });

  it('rejects a repeated parameter instead of guessing which value was signed', () => {
    // Prepare
    const request = notify();
    const doubled = Buffer.from(`${request.rawBody.toString()}&total_amount=0.01`);

    // Act
    const verdict = adapter.verifyCallback({ ...request, rawBody: doubled });

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'repeated parameter' });
  });

  it('rejects a signed but unparsable amount', () => {
    // Act
    const verdict = adapter.verifyCallback(notify({ total_amount: '12.345' }));

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'total_amount is not a valid amount' });
  });

  it('answers success for a paid verdict', () => {
    // Act
    const reply = adapter.acknowledge({ kind: 'paid', outTradeNo: 'ORDER0001', amountCents: 1 });

    // Assess
    expect(reply).toEqual({ status: 200, contentType: 'text/plain; charset=utf-8', body: 'success' });
  });
});
