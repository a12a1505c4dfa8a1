// channel_b (WeChat Pay v3): settings validation, Native order against a fake API, callback verification.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Aes } from 'wechatpay-axios-plugin';
import type { ChannelBSettings } from '#lib/billing/channels/channel-b.ts';
import { createChannelB } from '#lib/billing/channels/channel-b.ts';
import { ChannelConfigError, ChannelRequestError } from '#lib/billing/channels/errors.ts';
import type { FakeWechatpay, WechatpayCallbackOptions } from '#test/support/fake-gateways/index.ts';
import {
  buildWechatpayCallback,
  generateTestKeyPair,
  startFakeWechatpay,
  wechatpayTransaction,
} from '#test/support/fake-gateways/index.ts';

const APP_ID = 'wxd678efh567hg6787';
const MCH_ID = '1230000109';
const API_V3_KEY = '0123456789abcdef0123456789abcdef';
const PLATFORM_SERIAL = 'PUB_KEY_ID_0112340000000000000000000000000000';
const NOW = new Date('2024-01-01T04:00:05Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);

const merchantKeys = generateTestKeyPair();
const platformKeys = generateTestKeyPair();
const strangerKeys = generateTestKeyPair();

function settings(overrides: Partial<ChannelBSettings> = {}): ChannelBSettings {
  return {
    appId: APP_ID,
    mchId: MCH_ID,
    serialNo: '3775B6A45ACD588826D15E583A95F5DD2E7B2B17',
    privateKey: merchantKeys.privateKeyPkcs8Pem,
    apiV3Key: API_V3_KEY,
    platformPublicKey: platformKeys.publicKeyPem,
    platformSerialNo: PLATFORM_SERIAL,
    ...overrides,
  };
}

function callback(overrides: Partial<WechatpayCallbackOptions> = {}) {
  return buildWechatpayCallback({
    platformPrivateKey: platformKeys.privateKey,
    platformSerial: PLATFORM_SERIAL,
    apiV3Key: API_V3_KEY,
    timestamp: NOW_SECONDS,
    ...overrides,
  }).request;
}

const orderInput = {
  outTradeNo: 'ORDER0001',
  amountCents: 1230,
  subject: 'VIP plan',
  notifyUrl: 'https://api.example.com/api/v1/payments/channel_b/callback',
};

describe('createChannelB settings', () => {
  it('refuses to exist without the platform public key (SPEC 2.4 rule 1)', () => {
    // Act
    const attempt = () => createChannelB(settings({ platformPublicKey: undefined }));

    // Assess
    expect(attempt).toThrow(ChannelConfigError);
    expect(attempt).toThrow(/^platformPublicKey: /);
  });

  it('refuses an empty platform public key', () => {
    // Act + Assess
    expect(() => createChannelB(settings({ platformPublicKey: '  ' }))).toThrow(ChannelConfigError);
  });

  it.each([
    ['31', 31],
    ['33', 33],
  ])('refuses a %s-byte api v3 key without echoing it', (_label, length) => {
    // Prepare
    const apiV3Key = 'k'.repeat(length);

    // Act
    const attempt = () => createChannelB(settings({ apiV3Key }));

    // Assess
    expect(attempt).toThrow(ChannelConfigError);
    expect(attempt).toThrow('apiV3Key: must be exactly 32 bytes');
  });

  it('counts the api v3 key in bytes, not characters', () => {
    // Prepare: 'é' is two bytes in UTF-8.
    const thirtyTwoCharacters = 'é'.repeat(32);
    const thirtyTwoBytes = 'é'.repeat(16);

    // Act + Assess
    expect(() => createChannelB(settings({ apiV3Key: thirtyTwoCharacters }))).toThrow(/apiV3Key/);
    expect(createChannelB(settings({ apiV3Key: thirtyTwoBytes })).provider).toBe('channel_b');
  });

  it('refuses an unparsable merchant key naming the field only', () => {
    // Act
    const attempt = () => createChannelB(settings({ privateKey: 'garbage-SECRET' }));

    // Assess
    expect(attempt).toThrow(/^privateKey: /);
    expect(attempt).not.toThrow(/SECRET/);
  });
});

describe('channel_b createOrder', () => {
  let api: FakeWechatpay;
  let forgingApi: FakeWechatpay;

  beforeAll(async () => {
    const common = {
      platformPrivateKey: platformKeys.privateKey,
      platformSerial: PLATFORM_SERIAL,
      merchantPublicKey: merchantKeys.publicKey,
      mchId: MCH_ID,
    };
    api = await startFakeWechatpay(common);
    forgingApi = await startFakeWechatpay({ ...common, answerSignedBy: strangerKeys.privateKey });
  });

  afterAll(async () => {
    await api.close();
    await forgingApi.close();
  });

  it('returns the code_url of a verified answer and sends the Native order body', async () => {
    // Prepare
    const adapter = createChannelB(settings({ apiBaseUrl: api.apiBaseUrl }));

    // Act
    const order = await adapter.createOrder({ ...orderInput, expiresAt: new Date('2024-01-01T04:30:00Z') });

    // Assess
    expect(order).toEqual({ qrCode: 'weixin://wxpay/bizpayurl?pr=fake0001' });
    const sent = api.requests.at(-1)!;
    expect(sent.headers['wechatpay-serial']).toBe(PLATFORM_SERIAL);
    expect(JSON.parse(sent.body)).toEqual({
      appid: APP_ID,
      mchid: MCH_ID,
      description: 'VIP plan',
      out_trade_no: 'ORDER0001',
      notify_url: orderInput.notifyUrl,
      amount: { total: 1230, currency: 'CNY' },
      time_expire: '2024-01-01T12:30:00+08:00',
    });
  });

  it('throws ChannelRequestError when the answer is signed by another key', async () => {
    // Prepare
    const adapter = createChannelB(settings({ apiBaseUrl: forgingApi.apiBaseUrl }));

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ChannelRequestError);
    await expect(attempt).rejects.toMatchObject({
      detail: expect.stringContaining('EV3_RES_HEADER_SIGNATURE'),
    });
  });

  it('throws ChannelRequestError when the answer comes from an unknown serial', async () => {
    // Prepare
    const adapter = createChannelB(
      settings({ apiBaseUrl: api.apiBaseUrl, platformSerialNo: 'PUB_KEY_ID_OTHER' }),
    );

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ChannelRequestError);
  });

  it('surfaces the 401 SIGN_ERROR when our merchant key is not the registered one', async () => {
    // Prepare
    const adapter = createChannelB(
      settings({ apiBaseUrl: api.apiBaseUrl, privateKey: strangerKeys.privateKeyPkcs1Pem }),
    );

    // Act
    const attempt = adapter.createOrder(orderInput);

    // Assess
    await expect(attempt).rejects.toMatchObject({
      name: 'ChannelRequestError',
      detail: '401/SIGN_ERROR/ERR_BAD_REQUEST',
    });
  });

  it('verifies the answer with the single key when no platform serial is configured', async () => {
    // Prepare
    const adapter = createChannelB(settings({ apiBaseUrl: api.apiBaseUrl, platformSerialNo: undefined }));
    const forging = createChannelB(
      settings({ apiBaseUrl: forgingApi.apiBaseUrl, platformSerialNo: undefined }),
    );

    // Act
    const order = await adapter.createOrder(orderInput);
    const forged = forging.createOrder(orderInput);

    // Assess
    expect(order).toEqual({ qrCode: 'weixin://wxpay/bizpayurl?pr=fake0001' });
    await expect(forged).rejects.toBeInstanceOf(ChannelRequestError);
  });
});

describe('channel_b verifyCallback', () => {
  const adapter = createChannelB(settings());

  it('reports a verified SUCCESS as paid with total cents and the transaction id', () => {
    // Act
    const verdict = adapter.verifyCallback(callback(), NOW);

    // Assess
    expect(verdict).toEqual({
      kind: 'paid',
      outTradeNo: 'ORDER0001',
      amountCents: 1230,
      tradeNo: '1217752501201407033233368018',
    });
    expect(adapter.acknowledge(verdict as never)).toEqual({
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: '',
    });
  });

  it('accepts the neutral Channel-B-* header names', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ headerStyle: 'neutral' }), NOW);

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it.each([299, 300, -300])('accepts a timestamp %i s away from now', (offset) => {
    // Act
    const verdict = adapter.verifyCallback(callback({ timestamp: NOW_SECONDS + offset }), NOW);

    // Assess
    expect(verdict.kind).toBe('paid');
  });

  it.each([301, -301])('rejects a timestamp %i s away from now', (offset) => {
    // Act
    const verdict = adapter.verifyCallback(callback({ timestamp: NOW_SECONDS + offset }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'timestamp outside the 5-minute window' });
  });

  it('rejects an unknown serial even when the signature is good', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ platformSerial: 'PUB_KEY_ID_SOMEONE_ELSE' }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'unknown serial' });
  });

  it('rejects a callback signed by another key', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ platformPrivateKey: strangerKeys.privateKey }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a forged signature and answers FAIL with 400', () => {
    // Act
    const verdict = adapter.verifyCallback(
      callback({ signature: Buffer.alloc(256, 1).toString('base64') }),
      NOW,
    );

    // Assess
    expect(verdict.kind).toBe('rejected');
    expect(adapter.acknowledge(verdict)).toEqual({
      status: 400,
      contentType: 'application/json',
      body: '{"code":"FAIL","message":"signature does not verify"}',
    });
  });

  it('rejects the WECHATPAY/SIGNTEST/ probe', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ signature: 'WECHATPAY/SIGNTEST/abcdef==' }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature probe' });
  });

  it('rejects a callback without a signature header', () => {
    // Prepare
    const request = callback();
    const { 'wechatpay-signature': _dropped, ...headers } = request.headers;

    // Act
    const verdict = adapter.verifyCallback({ ...request, headers }, NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'missing signature headers' });
  });

  it('rejects a flipped ciphertext byte through the GCM tag', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ corruptCiphertext: true }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'resource does not decrypt' });
  });

  it('rejects a resource whose associated data is not the one it was sealed with', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ declaredAssociatedData: 'certificate' }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'resource does not decrypt' });
  });

  it('rejects a resource sealed with another api v3 key', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ apiV3Key: 'fedcba9876543210fedcba9876543210' }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'resource does not decrypt' });
  });

  it('rejects a body that was re-serialised after signing', () => {
    // Prepare
    const reserialise = (body: string) => JSON.stringify(JSON.parse(body), null, 1);

    // Act
    const verdict = adapter.verifyCallback(callback({ alterBodyAfterSigning: reserialise }), NOW);

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'signature does not verify' });
  });

  it('rejects a genuine callback for another merchant', () => {
    // Act
    const verdict = adapter.verifyCallback(
      callback({ transaction: wechatpayTransaction({ mchid: '1900000001' }) }),
      NOW,
    );

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'mchid is not ours' });
  });

  it('rejects a genuine callback for another app id', () => {
    // Act
    const verdict = adapter.verifyCallback(
      callback({ transaction: wechatpayTransaction({ appid: 'wx0000000000000000' }) }),
      NOW,
    );

    // Assess
    expect(verdict).toEqual({ kind: 'rejected', reason: 'appid is not ours' });
  });

  it.each(['NOTPAY', 'CLOSED', 'USERPAYING', 'REFUND'])(
    'ignores trade_state %s but acknowledges it',
    (state) => {
      // Act
      const verdict = adapter.verifyCallback(
        callback({ transaction: wechatpayTransaction({ trade_state: state }) }),
        NOW,
      );

      // Assess
      expect(verdict).toEqual({ kind: 'ignored', outTradeNo: 'ORDER0001', reason: `trade_state ${state}` });
      expect(adapter.acknowledge(verdict).status).toBe(200);
    },
  );

  it('ignores an event that is not TRANSACTION.SUCCESS (refund notices are read as refunds)', () => {
    // Act
    const verdict = adapter.verifyCallback(callback({ eventType: 'TRANSACTION.CLOSED' }), NOW);

    // Assess
    expect(verdict.kind).toBe('ignored');
  });

  it('uses the one configured key for any serial when no platform serial is set', () => {
    // Prepare
    const serialless = createChannelB(settings({ platformSerialNo: undefined }));

    // Act
    const verdict = serialless.verifyCallback(callback({ platformSerial: 'PUB_KEY_ID_WHATEVER' }), NOW);
    const forged = serialless.verifyCallback(callback({ platformPrivateKey: strangerKeys.privateKey }), NOW);

    // Assess
    expect(verdict.kind).toBe('paid');
    expect(forged.kind).toBe('rejected');
  });
});

describe('AES-GCM known answer (docs/PAYMENTS-GUIDE.md 2.5)', () => {
  it('decrypts the documented fixture with the plugin primitive the adapter uses', () => {
    // Prepare
    const key = Buffer.from('0123456789abcdef0123456789abcdef');

    // Act
    const plaintext = Aes.AesGcm.decrypt(
      '4ouGGHn75QwOTQ6x5UH1WuPJdsyhTfs=',
      key,
      '0123456789ab',
      'transaction',
    );

    // Assess
    expect(plaintext).toBe('{"a":1}');
  });
});
