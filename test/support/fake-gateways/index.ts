// Fake channel gateways and signed callback builders shared by unit and integration tests.
export type { AlipayNotifyOptions, FakeAlipayGateway, FakeAlipayGatewayOptions } from './alipay.ts';
export {
  A_SELLER_ID,
  A_TRADE_NO,
  alipayNotifyFields,
  alipayRsa2Sign,
  alipaySigningContent,
  buildAlipayNotify,
  startFakeAlipayGateway,
} from './alipay.ts';
export type { ChannelKeys, FakeChannels } from './channels.ts';
export { generateChannelKeys, startFakeChannels } from './channels.ts';
export type { EpayNotifyOptions, FakeEpay, FakeEpayOptions } from './epay.ts';
export { buildEpayNotify, C_TRADE_NO, epayMd5Sign, epayNotifyFields, startFakeEpay } from './epay.ts';
export type { TestKeyPair } from './keys.ts';
export { generateTestKeyPair } from './keys.ts';
export {
  A_APP_ID,
  B_API_V3_KEY,
  B_APP_ID,
  B_MCH_ID,
  B_MERCHANT_SERIAL,
  B_PLATFORM_SERIAL,
  C_KEY,
  C_PID,
  channelSettingsFor,
} from './merchant.ts';
export type { QueryMode } from './query-book.ts';
export { QueryBook } from './query-book.ts';
export type { FakeReply, FakeRequest, LoopbackServer } from './server.ts';
export { startLoopbackServer } from './server.ts';
export type {
  FakeWechatpay,
  FakeWechatpayOptions,
  WechatpayCallback,
  WechatpayCallbackOptions,
} from './wechatpay.ts';
export {
  buildWechatpayCallback,
  startFakeWechatpay,
  wechatpayEncrypt,
  wechatpaySign,
  wechatpayTransaction,
} from './wechatpay.ts';
