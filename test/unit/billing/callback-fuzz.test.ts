// Fuzz: no callback input, however malformed, makes a verifier throw or report anything but rejected.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createChannelA } from '#lib/billing/channels/channel-a.ts';
import { createChannelB } from '#lib/billing/channels/channel-b.ts';
import { createChannelC } from '#lib/billing/channels/channel-c.ts';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { generateTestKeyPair } from '#test/support/fake-gateways/index.ts';

const ourKeys = generateTestKeyPair();
const theirKeys = generateTestKeyPair();
const NOW = new Date('2024-01-01T04:00:00Z');

const adapters = [
  createChannelA({ appId: 'A1', privateKey: ourKeys.privateKeyPkcs8Pem, publicKey: theirKeys.publicKeyPem }),
  createChannelB({
    appId: 'wx1',
    mchId: '1230000109',
    serialNo: 'AB12',
    privateKey: ourKeys.privateKeyPkcs8Pem,
    apiV3Key: '0123456789abcdef0123456789abcdef',
    platformPublicKey: theirKeys.publicKeyPem,
    platformSerialNo: 'PUB_KEY_ID_1',
  }),
  createChannelC({ pid: '1001', key: 'abc123', gatewayUrl: 'https://pay.example.com/' }),
];

const headerValue = fc.oneof(fc.string(), fc.constant(String(Math.floor(NOW.getTime() / 1000))));
const callbackRequest: fc.Arbitrary<CallbackRequest> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT'),
  headers: fc.record(
    {
      'wechatpay-signature': fc.oneof(fc.base64String(), fc.string()),
      'wechatpay-timestamp': headerValue,
      'wechatpay-nonce': fc.string(),
      'wechatpay-serial': fc.constantFrom('PUB_KEY_ID_1', 'other', ''),
    },
    { requiredKeys: [] },
  ),
  rawBody: fc.oneof(
    fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
    fc.string().map((text) => Buffer.from(text)),
    fc
      .dictionary(fc.constantFrom('sign', 'app_id', 'pid', 'money', 'trade_status'), fc.string())
      .map((fields) => Buffer.from(new URLSearchParams(fields).toString())),
  ),
  rawQuery: fc.oneof(
    fc.string(),
    fc
      .dictionary(fc.constantFrom('sign', 'pid', 'money', 'trade_status', 'out_trade_no'), fc.string())
      .map((fields) => new URLSearchParams(fields).toString()),
  ),
});

describe('callback verifiers under arbitrary input', () => {
  it.each(adapters.map((adapter) => [adapter.provider, adapter] as const))(
    '%s rejects without throwing',
    (_provider, adapter) => {
      // Prepare / Act / Assess
      fc.assert(
        fc.property(callbackRequest, (request) => {
          const verdict = adapter.verifyCallback(request, NOW);
          expect(verdict.kind).toBe('rejected');
          expect(adapter.acknowledge(verdict).status).toBe(400);
        }),
        { numRuns: 300 },
      );
    },
  );
});
