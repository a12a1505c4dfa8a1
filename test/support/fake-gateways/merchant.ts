// The merchant identities our side and the fake gateways agree on, for every test that configures channels.
export const A_APP_ID = '2021000000000000';
export const B_MCH_ID = '1230000109';
export const B_API_V3_KEY = '0123456789abcdef0123456789abcdef';
export const B_PLATFORM_SERIAL = 'PUB_KEY_ID_0112340000000000000000000000000000';
export const C_PID = '1001';
export const C_KEY = 'epay-merchant-key-abc123';

export const B_APP_ID = 'wxd678efh567hg6787';
export const B_MERCHANT_SERIAL = '3775B6A45ACD588826D15E583A95F5DD2E7B2B17';

/**
 * The body of `PUT /api/v1/admin/payment` that enables all three channels against the fake gateways, with
 * the merchant identities above and the test's key pairs.
 */
export function channelSettingsFor(
  gateways: {
    alipay: { gatewayUrl: string };
    wechatpay: { apiBaseUrl: string };
    epay: { baseUrl: string; mapiUrl: string };
  },
  keys: {
    app: { privateKeyPkcs1Pem: string };
    alipay: { publicKeyBase64: string };
    merchant: { privateKeyBase64: string };
    platform: { publicKeyPem: string };
  },
) {
  return {
    channel_a: {
      enabled: true,
      app_id: A_APP_ID,
      gateway_url: gateways.alipay.gatewayUrl,
      private_key: keys.app.privateKeyPkcs1Pem,
      public_key: keys.alipay.publicKeyBase64,
    },
    channel_b: {
      enabled: true,
      app_id: B_APP_ID,
      mch_id: B_MCH_ID,
      serial_no: B_MERCHANT_SERIAL,
      private_key: keys.merchant.privateKeyBase64,
      api_v3_key: B_API_V3_KEY,
      platform_public_key: keys.platform.publicKeyPem,
      platform_serial_no: B_PLATFORM_SERIAL,
      api_base_url: gateways.wechatpay.apiBaseUrl,
    },
    channel_c: {
      enabled: true,
      pid: C_PID,
      key: C_KEY,
      gateway_url: gateways.epay.baseUrl,
      api_url: gateways.epay.mapiUrl,
      pay_type: 'wxpay',
    },
  };
}
