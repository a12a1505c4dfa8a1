// The three fake gateways started together, with the settings body (PUT /api/v1/admin/payment) that points
// the service at them: what every test that settles channel orders starts from.
import { type FakeAlipayGateway, startFakeAlipayGateway } from './alipay.ts';
import { type FakeEpay, startFakeEpay } from './epay.ts';
import { generateTestKeyPair, type TestKeyPair } from './keys.ts';
import { B_MCH_ID, B_PLATFORM_SERIAL, C_KEY, C_PID, channelSettingsFor } from './merchant.ts';
import { type FakeWechatpay, startFakeWechatpay } from './wechatpay.ts';

/** The key pairs of both sides: ours (app, merchant) and the channels' (alipay, platform). */
export interface ChannelKeys {
  app: TestKeyPair;
  alipay: TestKeyPair;
  merchant: TestKeyPair;
  platform: TestKeyPair;
}

/** Four fresh key pairs (RSA generation is the slow part: once per file). */
export function generateChannelKeys(): ChannelKeys {
  return {
    app: generateTestKeyPair(),
    alipay: generateTestKeyPair(),
    merchant: generateTestKeyPair(),
    platform: generateTestKeyPair(),
  };
}

export interface FakeChannels {
  alipay: FakeAlipayGateway;
  wechatpay: FakeWechatpay;
  epay: FakeEpay;
  /** The payment settings that name these fakes and keys. */
  settings: ReturnType<typeof channelSettingsFor>;
  close(): Promise<void>;
}

export async function startFakeChannels(keys: ChannelKeys): Promise<FakeChannels> {
  const [alipay, wechatpay, epay] = await Promise.all([
    startFakeAlipayGateway({ alipayPrivateKey: keys.alipay.privateKey, appPublicKey: keys.app.publicKey }),
    startFakeWechatpay({
      platformPrivateKey: keys.platform.privateKey,
      platformSerial: B_PLATFORM_SERIAL,
      merchantPublicKey: keys.merchant.publicKey,
      mchId: B_MCH_ID,
    }),
    startFakeEpay({ pid: C_PID, key: C_KEY }),
  ]);
  return {
    alipay,
    wechatpay,
    epay,
    settings: channelSettingsFor({ alipay, wechatpay, epay }, keys),
    close: async () => {
      await Promise.all([alipay.close(), wechatpay.close(), epay.close()]);
    },
  };
}
