// channel_a wire protocol: Alipay face-to-face precreate (v2 gateway, RSA2) and its async notification.

import { type KeyObject, verify as verifySignature } from 'node:crypto';
import type { AlipaySdk } from 'alipay-sdk';
import { ChannelRequestError } from './errors.ts';
import {
  beijingDateTime,
  formNotificationVerdict,
  plainTextChannel,
  signedFormParams,
  sortedSigningContent,
} from './form.ts';
import { loadPrivateKey, loadPublicKey, privateKeyPem, publicKeyPem } from './keys.ts';
import { centsToYuan, yuanToCents } from './money.ts';
import { optionalHttpUrl, requireSetting } from './settings.ts';
import {
  type CallbackRequest,
  type CallbackVerdict,
  type ChannelOrder,
  type ChannelRefundInput,
  type CreateChannelOrderInput,
  paidVerdict,
  type QueryFailureReason,
  type QueryVerdict,
  type RefundVerdict,
  type SynchronousChannelAdapter,
} from './types.ts';

export interface ChannelASettings {
  appId: string;
  /** Our application private key (PKCS#1 or PKCS#8 PEM, or the bare base64 body). */
  privateKey: string;
  /** Alipay's public key, which signs gateway answers and notifications. */
  publicKey: string;
  /** When set, notifications must also name this seller (Alipay PID). */
  sellerId?: string;
  gatewayUrl?: string;
  timeoutMs?: number;
  clock?: () => Date;
}

const PROVIDER = 'channel_a';
const PRECREATE = 'alipay.trade.precreate';
const QUERY = 'alipay.trade.query';
const REFUND = 'alipay.trade.refund';
const REFUND_QUERY = 'alipay.trade.fastpay.refund.query';
/** alipay.trade.query's answer for an out_trade_no nobody has paid (a precreated QR code not yet scanned). */
const TRADE_NOT_EXIST = 'ACQ.TRADE_NOT_EXIST';
const PAID_STATUSES = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);
const UNPAID_STATUSES = new Set(['WAIT_BUYER_PAY', 'TRADE_CLOSED']);
const MINUTE_MS = 60_000;

export function createChannelA(settings: ChannelASettings): SynchronousChannelAdapter {
  const appId = requireSetting('appId', settings.appId);
  const appPrivateKey = loadPrivateKey('privateKey', settings.privateKey);
  const alipayPublicKey = loadPublicKey('publicKey', settings.publicKey);
  const sellerId = settings.sellerId?.trim() || undefined;
  const gatewayUrl =
    optionalHttpUrl('gatewayUrl', settings.gatewayUrl) ?? 'https://openapi.alipay.com/gateway.do';
  const clock = settings.clock ?? (() => new Date());

  // The SDK (and its HTTP stack) loads on the first order, not at cold start: notifications never need it
  // (they are verified with node:crypto below). It ships beside the bundle (infra/bundling.ts).
  let sdk: Promise<AlipaySdk> | undefined;
  const alipaySdk = () => {
    sdk ??= import('alipay-sdk').then(
      // Normalised to PKCS#8 + SPKI so the SDK never has to guess the key layout (its keyType default is PKCS#1).
      ({ AlipaySdk }) =>
        new AlipaySdk({
          appId,
          privateKey: privateKeyPem(appPrivateKey),
          keyType: 'PKCS8',
          alipayPublicKey: publicKeyPem(alipayPublicKey),
          gateway: gatewayUrl,
          timeout: settings.timeoutMs ?? 5000,
          camelcase: false,
        }),
      (error: unknown) => {
        sdk = undefined;
        throw error;
      },
    );
    return sdk;
  };
  /** One call, signed by the SDK, its answer's sign verified (validateSign). */
  const exec = async (method: string, params: Record<string, unknown>, now = clock()) =>
    (await (
      await alipaySdk()
    ).exec(
      method,
      // The SDK takes process-local time by default; Alipay documents Beijing time, so pass it explicitly.
      { ...params, timestamp: beijingDateTime(now) },
      { validateSign: true },
    )) as unknown as Record<string, unknown>;
  /** A reconciliation call's answer, or the verdict of its failure. */
  async function answerOf(
    method: string,
    bizContent: Record<string, string>,
  ): Promise<
    { answer: Record<string, unknown> } | { failed: { kind: 'unknown'; reason: QueryFailureReason } }
  > {
    let answer: Record<string, unknown>;
    try {
      answer = await exec(method, { bizContent });
    } catch (error) {
      // The SDK's messages quote the raw answer and its sign: only a reason code leaves this function.
      return { failed: { kind: 'unknown', reason: alipayFailureReason(error) } };
    }
    if (typeof answer !== 'object' || answer === null)
      return { failed: { kind: 'unknown', reason: 'malformed' } };
    return { answer };
  }

  async function createOrder(input: CreateChannelOrderInput): Promise<ChannelOrder> {
    const now = clock();
    const bizContent: Record<string, string> = {
      out_trade_no: input.outTradeNo,
      total_amount: centsToYuan(input.amountCents),
      subject: input.subject,
    };
    if (input.expiresAt) {
      const minutesLeft = Math.max(1, Math.ceil((input.expiresAt.getTime() - now.getTime()) / MINUTE_MS));
      bizContent.timeout_express = `${minutesLeft}m`;
    }
    let answer: Record<string, unknown>;
    try {
      answer = await exec(PRECREATE, { bizContent, notify_url: input.notifyUrl }, now);
    } catch (error) {
      // The SDK error may quote the raw answer; keep it out of our message, only its class as detail.
      throw new ChannelRequestError(PROVIDER, 'precreate call failed or its answer did not verify', {
        detail: error instanceof Error ? error.name : undefined,
      });
    }
    if (answer.code !== '10000' || typeof answer.qr_code !== 'string' || answer.qr_code === '') {
      const detail = [answer.code, answer.sub_code].filter((part) => typeof part === 'string').join('/');
      throw new ChannelRequestError(PROVIDER, 'precreate was refused', { detail: detail || undefined });
    }
    const order: ChannelOrder = { qrCode: answer.qr_code };
    if (typeof answer.trade_no === 'string' && answer.trade_no !== '') {
      order.tradeNo = answer.trade_no;
    }
    return order;
  }

  function verifyCallback(request: CallbackRequest): CallbackVerdict {
    // Alipay's Content-Type is malformed, so the body is parsed as a form whatever the header says.
    const form = signedFormParams(request.rawBody.toString('utf8'), (signType) => signType === 'RSA2');
    if ('refused' in form) return form.refused;
    const { params, signature } = form;
    if (!signatureMatches(params, signature, alipayPublicKey)) {
      return { kind: 'rejected', reason: 'signature does not verify' };
    }
    if (params.get('app_id') !== appId) return { kind: 'rejected', reason: 'app_id is not ours' };
    if (sellerId !== undefined && params.get('seller_id') !== sellerId) {
      return { kind: 'rejected', reason: 'seller_id is not ours' };
    }
    return formNotificationVerdict(params, {
      isPaid: (status) => PAID_STATUSES.has(status),
      notPaidReason: (status) =>
        UNPAID_STATUSES.has(status) ? `trade_status ${status}` : 'trade_status is not a payment',
      amountField: 'total_amount',
    });
  }

  /**
   * alipay.trade.query (docs/PAYMENTS-GUIDE.md, "Reconciliation"): the SDK signs the request and verifies the
   * answer's `sign` over the raw `alipay_trade_query_response` text with Alipay's key (validateSign). The
   * answer concerns our app only (it answers our signed request), and must name the order we asked about
   * and, when it names a seller and seller_id is configured, our seller.
   */
  async function queryOrder(outTradeNo: string): Promise<QueryVerdict> {
    const call = await answerOf(QUERY, { out_trade_no: outTradeNo });
    if ('failed' in call) return call.failed;
    const { answer } = call;
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const code = text(answer.code);
    const subCode = text(answer.sub_code);
    if (code !== '10000') {
      if (subCode === TRADE_NOT_EXIST) {
        return { kind: 'not_paid', outTradeNo, reason: 'trade does not exist at the channel' };
      }
      const detail = [code, subCode].filter((part) => part !== undefined).join('/');
      return { kind: 'unknown', reason: 'channel_error', ...(detail ? { detail } : {}) };
    }
    if (answer.out_trade_no !== outTradeNo) return { kind: 'unknown', reason: 'order_mismatch' };
    const answeredSeller = text(answer.seller_id);
    if (sellerId !== undefined && answeredSeller !== undefined && answeredSeller !== sellerId) {
      return { kind: 'unknown', reason: 'merchant', detail: 'seller_id is not ours' };
    }
    const status = text(answer.trade_status) ?? '';
    if (!PAID_STATUSES.has(status)) {
      return { kind: 'not_paid', outTradeNo, reason: `trade_status ${status || 'missing'}` };
    }
    const amountCents = yuanToCents(text(answer.total_amount) ?? '');
    if (amountCents === undefined) {
      return { kind: 'unknown', reason: 'malformed', detail: 'total_amount is not a valid amount' };
    }
    return paidVerdict(outTradeNo, amountCents, text(answer.trade_no));
  }

  /**
   * alipay.trade.refund (docs/PAYMENTS-GUIDE.md, "Refunds"): signed by the SDK, the answer's RSA2 `sign`
   * verified by it (validateSign). out_request_no (our refund's id) is Alipay's idempotency key: asking
   * again with it refunds nothing more and answers code 10000 with fund_change N. Code 10000 is a refund made;
   * a business failure (40004) refunds nothing.
   */
  async function refund(input: ChannelRefundInput): Promise<RefundVerdict> {
    const call = await answerOf(REFUND, {
      out_trade_no: input.outTradeNo,
      refund_amount: centsToYuan(input.amountCents),
      out_request_no: input.refundNo,
      refund_reason: input.reason.slice(0, 256),
    });
    if ('failed' in call) return call.failed;
    const { answer } = call;
    if (answer.code === '10000') {
      if (answer.out_trade_no !== undefined && answer.out_trade_no !== input.outTradeNo) {
        return { kind: 'unknown', reason: 'order_mismatch' };
      }
      return { kind: 'succeeded' };
    }
    if (answer.code === '40004') {
      return { kind: 'refused', detail: String(answer.sub_code ?? answer.code) };
    }
    return { kind: 'unknown', reason: 'channel_error', detail: String(answer.code ?? '') };
  }

  /**
   * alipay.trade.fastpay.refund.query: Alipay's rule is that an answer carrying the refund (refund_amount)
   * with refund_status empty or REFUND_SUCCESS is a refund made; an answer without it, none made.
   */
  async function queryRefund(outTradeNo: string, refundNo: string): Promise<RefundVerdict> {
    const call = await answerOf(REFUND_QUERY, { out_trade_no: outTradeNo, out_request_no: refundNo });
    if ('failed' in call) return call.failed;
    const { answer } = call;
    if (answer.code !== '10000') {
      return { kind: 'unknown', reason: 'channel_error', detail: String(answer.code ?? '') };
    }
    const status = answer.refund_status;
    if (
      typeof answer.refund_amount === 'string' &&
      (status === undefined || status === '' || status === 'REFUND_SUCCESS')
    ) {
      return { kind: 'succeeded' };
    }
    return { kind: 'refused', detail: 'no such refund at the channel' };
  }

  return plainTextChannel(PROVIDER, {
    createOrder,
    verifyCallback,
    queryOrder,
    refund,
    queryRefund,
    queryOrigin: new URL(gatewayUrl).origin,
  });
}

/**
 * What went wrong in an `exec`, from the SDK's error (alipay-sdk 4: transport errors carry a cause, an HTTP
 * error quotes the status, an unparsable answer says 格式错误 (format error), a bad sign says 验签 (verify)).
 */
function alipayFailureReason(error: unknown): QueryFailureReason {
  if (!(error instanceof Error)) return 'malformed';
  // A missing sign reaches node:crypto's verify as undefined.
  if (error.name === 'TypeError') return 'signature';
  const message = error.message;
  if (message.startsWith('HttpClient Request error')) return 'unreachable';
  if (message.includes('验签')) return 'signature';
  if (message.startsWith('HTTP')) return 'http_status';
  return 'malformed';
}

/** Alipay's notification recipe (rsaCheckV1): drop sign and sign_type and empty values, sort, join, RSA2. */
function signatureMatches(params: Map<string, string>, signature: string, publicKey: KeyObject): boolean {
  const content = sortedSigningContent(params, ['sign', 'sign_type']);
  try {
    return verifySignature(
      'RSA-SHA256',
      Buffer.from(content, 'utf8'),
      publicKey,
      Buffer.from(signature, 'base64'),
    );
  } catch {
    return false;
  }
}
