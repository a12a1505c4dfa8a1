// channel_b wire protocol: WeChat Pay API v3 Native orders and the signed, AES-GCM encrypted pay callback.
import type { Wechatpay } from 'wechatpay-axios-plugin';
import {
  acknowledgeWechatpay,
  decryptResource,
  isFresh,
  parseJsonAnswer,
  readSignedMessageHeaders,
  rsaVerifies,
  verifyAnswerWithUnnamedKey,
} from './channel-b-messages.ts';
import { ChannelConfigError, ChannelRequestError } from './errors.ts';
import { beijingRfc3339 } from './form.ts';
import { parseJsonObject } from './json.ts';
import { certificateSerial, loadPrivateKey, loadPublicKey, privateKeyPem } from './keys.ts';
import { optionalHttpUrl, requireSetting } from './settings.ts';
import {
  type CallbackRequest,
  type CallbackVerdict,
  type ChannelOrder,
  type ChannelRefundInput,
  type CreateChannelOrderInput,
  paidVerdict,
  type QueryVerdict,
  type RefundVerdict,
  type SynchronousChannelAdapter,
} from './types.ts';

export interface ChannelBSettings {
  appId: string;
  mchId: string;
  /** Serial of our merchant API certificate. */
  serialNo: string;
  /** Our merchant API private key. */
  privateKey: string;
  /** The 32-byte APIv3 key that encrypts callback resources. */
  apiV3Key: string;
  /** WeChat Pay public key (or platform certificate) that signs answers and callbacks. Mandatory. */
  platformPublicKey: string | undefined;
  /** `PUB_KEY_ID_...` or the platform certificate serial; when absent the one configured key is used. */
  platformSerialNo?: string;
  apiBaseUrl?: string;
  timeoutMs?: number;
}

const PROVIDER = 'channel_b';
const SIGNATURE_TYPE = 'WECHATPAY2-SHA256-RSA2048';
const PROBE_PREFIX = 'WECHATPAY/SIGNTEST/';
const DESCRIPTION_MAX_CHARS = 127;
// The plugin insists on a serial-keyed map; this key stands for "our only platform key" when none is set.
const UNNAMED_PLATFORM_SERIAL = 'platform-key-without-configured-serial';
/** What WeChat Pay allows in an out_trade_no; anything else is not one of our orders and is never put in a path. */
const OUT_TRADE_NO = /^[0-9A-Za-z_\-*|]{1,32}$/;

export function createChannelB(settings: ChannelBSettings): SynchronousChannelAdapter {
  // SPEC 2.4 rule 1: without the platform key no callback could be verified, so refuse to exist at all.
  if (typeof settings.platformPublicKey !== 'string' || settings.platformPublicKey.trim() === '') {
    throw new ChannelConfigError('platformPublicKey', 'is required to verify callbacks');
  }
  const appId = requireSetting('appId', settings.appId);
  const mchId = requireSetting('mchId', settings.mchId);
  const serialNo = requireSetting('serialNo', settings.serialNo);
  const merchantPrivateKey = loadPrivateKey('privateKey', settings.privateKey);
  if (typeof settings.apiV3Key !== 'string' || Buffer.byteLength(settings.apiV3Key, 'utf8') !== 32) {
    throw new ChannelConfigError('apiV3Key', 'must be exactly 32 bytes');
  }
  const apiV3Key = Buffer.from(settings.apiV3Key, 'utf8');
  const platformPublicKey = loadPublicKey('platformPublicKey', settings.platformPublicKey);
  const platformSerial =
    settings.platformSerialNo?.trim() || certificateSerial(settings.platformPublicKey) || undefined;

  const apiBaseUrl = optionalHttpUrl('apiBaseUrl', settings.apiBaseUrl) ?? 'https://api.mch.weixin.qq.com/';
  const platformKeyId = platformSerial ?? UNNAMED_PLATFORM_SERIAL;
  // The channel's client refuses a platform key filed under our own certificate's serial (it could not
  // tell its answers from our requests); say so as a setting problem, before the client ever loads.
  if (platformKeyId === serialNo) {
    throw new ChannelConfigError(
      settings.platformSerialNo?.trim() ? 'platformSerialNo' : 'platformPublicKey',
      'must name the platform key, not the merchant certificate (serial_no)',
    );
  }

  // The SDK (axios and its HTTP stack) loads on the first order, not at cold start: callbacks never need it
  // (they are verified and decrypted with node:crypto below). It ships beside the bundle (infra/bundling.ts).
  // Held in a box: the client answers every property (`client.then` is a request path), so a promise
  // resolving to the client itself would try to await it.
  let sdkClient: Promise<{ client: Wechatpay }> | undefined;
  const wechatpayClient = () => {
    sdkClient ??= import('wechatpay-axios-plugin').then(
      ({ Wechatpay }) => ({
        client: new Wechatpay({
          mchid: mchId,
          serial: serialNo,
          privateKey: privateKeyPem(merchantPrivateKey),
          certs: { [platformKeyId]: platformPublicKey },
          baseURL: apiBaseUrl,
          timeout: settings.timeoutMs ?? 5000,
        }),
      }),
      (error: unknown) => {
        sdkClient = undefined;
        throw error;
      },
    );
    return sdkClient;
  };

  /** How answers are verified: the plugin by serial, or our own check when the one key has no serial. */
  function answerVerification(): Record<string, unknown> {
    const requestConfig: Record<string, unknown> = {};
    if (platformSerial?.startsWith('PUB_KEY_ID_')) {
      // Asks WeChat to sign the answer with the public key rather than a platform certificate.
      requestConfig.headers = { 'Wechatpay-Serial': platformSerial };
    }
    if (!platformSerial) {
      // The plugin only knows keys by serial; with a single unnamed key we verify the answer ourselves.
      requestConfig.transformResponse = [verifyAnswerWithUnnamedKey(platformPublicKey), parseJsonAnswer];
    }
    return requestConfig;
  }

  async function createOrder(input: CreateChannelOrderInput): Promise<ChannelOrder> {
    const body: Record<string, unknown> = {
      appid: appId,
      mchid: mchId,
      description: [...input.subject].slice(0, DESCRIPTION_MAX_CHARS).join(''),
      out_trade_no: input.outTradeNo,
      notify_url: input.notifyUrl,
      amount: { total: input.amountCents, currency: 'CNY' },
    };
    if (input.expiresAt) {
      body.time_expire = beijingRfc3339(input.expiresAt);
    }
    const requestConfig = answerVerification();
    const { client } = await wechatpayClient();
    let answer: { data?: unknown };
    try {
      answer = await client.chain('v3/pay/transactions/native').post(body, requestConfig);
    } catch (error) {
      if (error instanceof ChannelRequestError) throw error;
      // Not chained as cause: axios errors carry the client config, which holds key material.
      throw new ChannelRequestError(PROVIDER, 'native order failed or its answer did not verify', {
        detail: describeAxiosFailure(error),
      });
    }
    const codeUrl = (answer.data as { code_url?: unknown } | undefined)?.code_url;
    if (typeof codeUrl !== 'string' || codeUrl === '') {
      throw new ChannelRequestError(PROVIDER, 'native order answer has no code_url');
    }
    return { qrCode: codeUrl };
  }

  function verifyCallback(request: CallbackRequest, now: Date = new Date()): CallbackVerdict {
    const headers = readSignedMessageHeaders(request.headers);
    if (!headers) return { kind: 'rejected', reason: 'missing signature headers' };
    if (headers.signature.startsWith(PROBE_PREFIX)) return { kind: 'rejected', reason: 'signature probe' };
    if (headers.signatureType !== undefined && headers.signatureType !== SIGNATURE_TYPE) {
      return { kind: 'rejected', reason: 'unsupported signature type' };
    }
    if (!isFresh(headers.timestamp, now)) {
      return { kind: 'rejected', reason: 'timestamp outside the 5-minute window' };
    }
    if (platformSerial !== undefined && headers.serial !== platformSerial) {
      return { kind: 'rejected', reason: 'unknown serial' };
    }
    const bodyText = request.rawBody.toString('utf8');
    // A lossy UTF-8 decode would verify different bytes than were signed.
    if (!Buffer.from(bodyText, 'utf8').equals(request.rawBody)) {
      return { kind: 'rejected', reason: 'body is not UTF-8' };
    }
    if (!rsaVerifies(headers, bodyText, platformPublicKey)) {
      return { kind: 'rejected', reason: 'signature does not verify' };
    }
    return readNotification(bodyText);
  }

  function readNotification(bodyText: string): CallbackVerdict {
    const notification = parseJsonObject(bodyText);
    const resource = notification?.resource as Record<string, unknown> | undefined;
    if (!notification || typeof resource !== 'object' || resource === null) {
      return { kind: 'rejected', reason: 'malformed notification' };
    }
    if (resource.algorithm !== 'AEAD_AES_256_GCM') {
      return { kind: 'rejected', reason: 'unsupported resource algorithm' };
    }
    const { ciphertext, nonce } = resource;
    const associatedData = resource.associated_data ?? '';
    if (typeof ciphertext !== 'string' || typeof nonce !== 'string' || typeof associatedData !== 'string') {
      return { kind: 'rejected', reason: 'malformed resource' };
    }
    let plaintext: string;
    try {
      plaintext = decryptResource(ciphertext, apiV3Key, nonce, associatedData);
    } catch {
      return { kind: 'rejected', reason: 'resource does not decrypt' };
    }
    const transaction = parseJsonObject(plaintext);
    if (!transaction) return { kind: 'rejected', reason: 'malformed transaction' };
    if (typeof notification.event_type === 'string' && notification.event_type.startsWith('REFUND.')) {
      return refundNotice(transaction);
    }
    const foreign = notOurs(transaction);
    if (foreign) return { kind: 'rejected', reason: foreign };
    const outTradeNo = typeof transaction.out_trade_no === 'string' ? transaction.out_trade_no : '';
    const tradeState = transaction.trade_state;
    if (notification.event_type !== 'TRANSACTION.SUCCESS' || tradeState !== 'SUCCESS') {
      const reason = `trade_state ${typeof tradeState === 'string' ? tradeState : 'missing'}`;
      return outTradeNo ? { kind: 'ignored', outTradeNo, reason } : { kind: 'ignored', reason };
    }
    const total = cnyTotal(transaction);
    if (!outTradeNo || total === 'missing')
      return { kind: 'rejected', reason: 'missing out_trade_no or amount' };
    if (total === 'not CNY') return { kind: 'rejected', reason: 'currency is not CNY' };
    return paidVerdict(outTradeNo, total, transaction.transaction_id);
  }

  /** Why a transaction is not for this merchant and app, if it is not. */
  /**
   * A refund notice (REFUND.SUCCESS, REFUND.ABNORMAL, REFUND.CLOSED): verified and decrypted exactly as a
   * payment notice; its resource names our mchid, the order and our refund (out_refund_no). ABNORMAL (the
   * money could not reach the buyer's account) needs a person: the refund stays pending.
   */
  function refundNotice(refund: Record<string, unknown>): CallbackVerdict {
    if (refund.mchid !== mchId) return { kind: 'rejected', reason: 'mchid is not ours' };
    const outTradeNo = typeof refund.out_trade_no === 'string' ? refund.out_trade_no : '';
    const refundNo = typeof refund.out_refund_no === 'string' ? refund.out_refund_no : '';
    if (!outTradeNo || !refundNo)
      return { kind: 'rejected', reason: 'missing out_trade_no or out_refund_no' };
    const status = refund.refund_status;
    const result = status === 'SUCCESS' ? 'succeeded' : status === 'CLOSED' ? 'failed' : 'pending';
    return { kind: 'refund', outTradeNo, refundNo, result };
  }

  /**
   * POST v3/refund/domestic/refunds (docs/PAYMENTS-GUIDE.md, "Refunds"): signed by the SDK, its answer's
   * signature verified like every answer (answerVerification). out_refund_no (our refund's id) is WeChat
   * Pay's idempotency key. The answer is usually PROCESSING: the result comes by the refund notice.
   */
  async function refund(input: ChannelRefundInput): Promise<RefundVerdict> {
    let answer: { data?: unknown };
    try {
      const { client } = await wechatpayClient();
      answer = await client.chain('v3/refund/domestic/refunds').post(
        {
          out_trade_no: input.outTradeNo,
          out_refund_no: input.refundNo,
          reason: [...input.reason].slice(0, 80).join(''),
          notify_url: input.notifyUrl,
          amount: { refund: input.amountCents, total: input.totalCents, currency: 'CNY' },
        },
        answerVerification(),
      );
    } catch (error) {
      const failure = (typeof error === 'object' && error !== null ? error : {}) as {
        response?: { status?: unknown; data?: unknown };
      };
      const status = failure.response?.status;
      // A 4xx with a business code (NOT_ENOUGH, INVALID_REQUEST...) is WeChat Pay saying no.
      if (typeof status === 'number' && status >= 400 && status < 500) {
        const code = (failure.response?.data as { code?: unknown } | undefined)?.code;
        return { kind: 'refused', detail: typeof code === 'string' ? code : String(status) };
      }
      return { kind: 'unknown', reason: typeof status === 'number' ? 'http_status' : 'unreachable' };
    }
    const data = answer.data as Record<string, unknown> | undefined;
    if (typeof data !== 'object' || data === null) return { kind: 'unknown', reason: 'malformed' };
    if (data.out_refund_no !== input.refundNo) return { kind: 'unknown', reason: 'order_mismatch' };
    if (data.status === 'SUCCESS') return { kind: 'succeeded' };
    if (data.status === 'CLOSED') return { kind: 'refused', detail: 'CLOSED' };
    return { kind: 'pending' };
  }

  /** GET v3/refund/domestic/refunds/{out_refund_no}: the refund's status, the answer verified as every answer. */
  async function queryRefund(_outTradeNo: string, refundNo: string): Promise<RefundVerdict> {
    let answer: { data?: unknown };
    try {
      const { client } = await wechatpayClient();
      answer = await client
        .chain(`v3/refund/domestic/refunds/${encodeURIComponent(refundNo)}`)
        .get(answerVerification());
    } catch (error) {
      const status = (error as { response?: { status?: unknown } } | undefined)?.response?.status;
      // 404 RESOURCE_NOT_EXISTS: WeChat Pay never took it, so nothing was refunded.
      if (status === 404) return { kind: 'refused', detail: 'RESOURCE_NOT_EXISTS' };
      return { kind: 'unknown', reason: typeof status === 'number' ? 'http_status' : 'unreachable' };
    }
    const data = answer.data as Record<string, unknown> | undefined;
    if (typeof data !== 'object' || data === null) return { kind: 'unknown', reason: 'malformed' };
    if (data.out_refund_no !== refundNo) return { kind: 'unknown', reason: 'order_mismatch' };
    if (data.status === 'SUCCESS') return { kind: 'succeeded' };
    if (data.status === 'CLOSED') return { kind: 'refused', detail: 'CLOSED' };
    return { kind: 'pending' };
  }

  function notOurs(transaction: Record<string, unknown>): string | undefined {
    if (transaction.mchid !== mchId) return 'mchid is not ours';
    if (transaction.appid !== appId) return 'appid is not ours';
    return undefined;
  }

  /**
   * GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid=... (docs/PAYMENTS-GUIDE.md, "Reconciliation"),
   * signed with our merchant key. The answer is verified as a callback is: the Wechatpay-* headers' RSA
   * signature over `timestamp\nnonce\nbody\n` with the platform key named by its serial, within 5 minutes;
   * then the transaction must be ours (mchid, appid) and the order we asked about.
   */
  async function queryOrder(outTradeNo: string): Promise<QueryVerdict> {
    if (!OUT_TRADE_NO.test(outTradeNo)) return { kind: 'unknown', reason: 'order_mismatch' };
    let answer: { data?: unknown };
    try {
      const { client } = await wechatpayClient();
      answer = await client
        .chain(`v3/pay/transactions/out-trade-no/${outTradeNo}`)
        .get({ ...answerVerification(), params: { mchid: mchId } });
    } catch (error) {
      return queryFailureVerdict(outTradeNo, error);
    }
    const transaction = answer.data;
    if (typeof transaction !== 'object' || transaction === null || Array.isArray(transaction)) {
      return { kind: 'unknown', reason: 'malformed' };
    }
    return queryAnswerVerdict(outTradeNo, transaction as Record<string, unknown>);
  }

  function queryAnswerVerdict(outTradeNo: string, transaction: Record<string, unknown>): QueryVerdict {
    const foreign = notOurs(transaction);
    if (foreign) return { kind: 'unknown', reason: 'merchant', detail: foreign };
    if (transaction.out_trade_no !== outTradeNo) return { kind: 'unknown', reason: 'order_mismatch' };
    const tradeState = typeof transaction.trade_state === 'string' ? transaction.trade_state : 'missing';
    if (tradeState !== 'SUCCESS')
      return { kind: 'not_paid', outTradeNo, reason: `trade_state ${tradeState}` };
    const total = cnyTotal(transaction);
    if (total === 'missing') return { kind: 'unknown', reason: 'malformed', detail: 'amount.total missing' };
    if (total === 'not CNY') return { kind: 'unknown', reason: 'malformed', detail: 'currency is not CNY' };
    return paidVerdict(outTradeNo, total, transaction.transaction_id);
  }

  return {
    provider: PROVIDER,
    createOrder,
    verifyCallback,
    acknowledge: acknowledgeWechatpay,
    queryOrder,
    refund,
    queryRefund,
    queryOrigin: new URL(apiBaseUrl).origin,
  };
}

/** A 404 ORDER_NOT_EXIST is an answer (nobody paid); every other failure is no answer at all. */
function queryFailureVerdict(outTradeNo: string, error: unknown): QueryVerdict {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    response?: { status?: unknown; data?: unknown };
  };
  const status = failure.response?.status;
  const data = failure.response?.data;
  const businessCode =
    typeof data === 'object' && data !== null ? (data as { code?: unknown }).code : undefined;
  if (status === 404 && businessCode === 'ORDER_NOT_EXIST') {
    return { kind: 'not_paid', outTradeNo, reason: 'order does not exist at the channel' };
  }
  const detail = describeAxiosFailure(error);
  const withDetail = detail ? { detail } : {};
  if (error instanceof ChannelRequestError) return { kind: 'unknown', reason: 'signature', ...withDetail };
  const code = typeof failure.code === 'string' ? failure.code : '';
  // The plugin's verifier names its refusals EV3_RES_HEADER... (headers missing, stale, unknown serial, digest).
  if (code.startsWith('EV3_RES_HEADER')) return { kind: 'unknown', reason: 'signature', ...withDetail };
  if (typeof status === 'number') return { kind: 'unknown', reason: 'http_status', ...withDetail };
  if (failure.response === undefined) return { kind: 'unknown', reason: 'unreachable', ...withDetail };
  return { kind: 'unknown', reason: 'malformed', ...withDetail };
}

/** A transaction's total in cents; an absent currency is CNY, the only one a Native order is made in. */
function cnyTotal(transaction: Record<string, unknown>): number | 'missing' | 'not CNY' {
  const amount = transaction.amount as { total?: unknown; currency?: unknown } | undefined;
  const total = amount?.total;
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) return 'missing';
  return amount?.currency === undefined || amount.currency === 'CNY' ? total : 'not CNY';
}

function describeAxiosFailure(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const failure = error as { code?: unknown; response?: { status?: unknown; data?: { code?: unknown } } };
  const parts = [failure.response?.status, failure.response?.data?.code, failure.code]
    .filter((part) => typeof part === 'string' || typeof part === 'number')
    .map(String);
  return parts.length > 0 ? parts.join('/') : undefined;
}
