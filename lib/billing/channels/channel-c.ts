// channel_c wire protocol: EPay (易支付) V1, MD5-signed: submit.php / mapi.php orders and the notify.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ChannelRequestError } from './errors.ts';
import { formNotificationVerdict, plainTextChannel, signedFormParams, sortedSigningContent } from './form.ts';
import { parseJsonObject } from './json.ts';
import { centsToYuan, yuanToCents } from './money.ts';
import { optionalHttpUrl, requireHttpUrl, requireSetting } from './settings.ts';
import {
  type CallbackRequest,
  type CallbackVerdict,
  type ChannelOrder,
  type ChannelRefundInput,
  type CreateChannelOrderInput,
  paidVerdict,
  type QueryVerdict,
  type RefundVerdict,
} from './types.ts';

export interface ChannelCSettings {
  pid: string;
  /** The merchant MD5 key. */
  key: string;
  /** Root address of the aggregator site, e.g. `https://pay.example.com/`. */
  gatewayUrl: string;
  /** Server-to-server order API: a full `.../mapi.php` URL, or a root to which `mapi.php` is appended. */
  apiUrl?: string;
  /** Full cashier URL; defaults to `${gatewayUrl}/submit.php`. */
  submitUrl?: string;
  /** Payment type code such as `alipay` or `wxpay`; empty lets the aggregator show its own picker. */
  payType?: string;
  timeoutMs?: number;
}

const PROVIDER = 'channel_c';
const SIGN_HEX_LENGTH = 32;

/** docs/PAYMENTS-GUIDE.md 3.4: drop sign, sign_type and empty values, sort, join raw, append the key, md5 lower hex. */
export function signEpayParams(params: Map<string, string> | Record<string, string>, key: string): string {
  const entries = params instanceof Map ? params : new Map(Object.entries(params));
  const content = sortedSigningContent(entries, ['sign', 'sign_type']);
  return createHash('md5').update(`${content}${key}`, 'utf8').digest('hex');
}

function joinUrl(base: string, file: string): string {
  return `${base.replace(/\/+$/, '')}/${file}`;
}

// The adapter's type is plainTextChannel's (form.ts).
export function createChannelC(settings: ChannelCSettings) {
  const pid = requireSetting('pid', settings.pid);
  requireSetting('key', settings.key);
  // Used exactly as configured: trimming would silently sign with a different secret.
  const key = settings.key;
  const gatewayUrl = requireHttpUrl('gatewayUrl', settings.gatewayUrl);
  const apiUrl = optionalHttpUrl('apiUrl', settings.apiUrl);
  const mapiUrl = apiUrl && (/\.php$/.test(new URL(apiUrl).pathname) ? apiUrl : joinUrl(apiUrl, 'mapi.php'));
  const submitUrl = optionalHttpUrl('submitUrl', settings.submitUrl) ?? joinUrl(gatewayUrl, 'submit.php');
  // The order query sits beside submit.php at the aggregator's root (docs/PAYMENTS-GUIDE.md, "Reconciliation").
  const queryUrl = joinUrl(gatewayUrl, 'api.php');
  const payType = settings.payType?.trim() || undefined;
  const timeoutMs = settings.timeoutMs ?? 5000;

  function signedOrderParams(input: CreateChannelOrderInput, forApi: boolean): URLSearchParams {
    const params: Record<string, string> = {
      pid,
      out_trade_no: input.outTradeNo,
      notify_url: input.notifyUrl,
      name: input.subject,
      money: centsToYuan(input.amountCents),
    };
    if (payType) params.type = payType;
    if (input.returnUrl) params.return_url = input.returnUrl;
    if (forApi && input.clientIp) params.clientip = input.clientIp;
    return new URLSearchParams({ ...params, sign: signEpayParams(params, key), sign_type: 'MD5' });
  }

  async function createOrder(input: CreateChannelOrderInput): Promise<ChannelOrder> {
    if (!mapiUrl) {
      // The cashier page does the rest in the payer's browser; nothing to call from here.
      return { payUrl: `${submitUrl}?${signedOrderParams(input, false).toString()}` };
    }
    let answerText: string;
    try {
      const response = await fetch(mapiUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: signedOrderParams(input, true).toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      answerText = await response.text();
      if (!response.ok) {
        throw new ChannelRequestError(PROVIDER, 'mapi.php answered an HTTP error', {
          detail: String(response.status),
        });
      }
    } catch (error) {
      if (error instanceof ChannelRequestError) throw error;
      throw new ChannelRequestError(PROVIDER, 'mapi.php could not be reached', {
        detail: error instanceof Error ? error.name : undefined,
      });
    }
    return readMapiAnswer(answerText);
  }

  function verifyCallback(request: CallbackRequest): CallbackVerdict {
    // The reference platform notifies with GET; a POSTed form is accepted as cheap insurance.
    const source =
      request.method.toUpperCase() === 'POST' && request.rawBody.length > 0
        ? request.rawBody.toString('utf8')
        : request.rawQuery;
    const form = signedFormParams(source, (signType) => signType.toUpperCase() === 'MD5');
    if ('refused' in form) return form.refused;
    const { params, signature } = form;
    if (!md5SignatureMatches(signature, signEpayParams(params, key))) {
      return { kind: 'rejected', reason: 'signature does not verify' };
    }
    if (params.get('pid') !== pid) return { kind: 'rejected', reason: 'pid is not ours' };
    return formNotificationVerdict(params, {
      isPaid: (status) => status === 'TRADE_SUCCESS',
      notPaidReason: (status) => `trade_status ${status || 'missing'}`,
      amountField: 'money',
    });
  }

  /**
   * One call to the aggregator's api.php: the text of its 2xx answer, or why there is none (unreachable, or
   * another status) as an `unknown` verdict. The URL or body carries the key, so neither is ever logged and
   * no error from here quotes them. Redirects are not followed: EPay's answers are unsigned, so only the
   * configured host's own answer counts, never one it redirects to.
   */
  async function callApi(
    url: string,
    init: RequestInit = {},
  ): Promise<{ text: string } | Extract<QueryVerdict, { kind: 'unknown' }>> {
    let status: number;
    let text: string;
    try {
      const response = await fetch(url, {
        ...init,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      return {
        kind: 'unknown',
        reason: 'unreachable',
        detail: error instanceof Error ? error.name : 'error',
      };
    }
    if (status < 200 || status >= 300)
      return { kind: 'unknown', reason: 'http_status', detail: String(status) };
    return { text };
  }

  /**
   * api.php?act=order (docs/PAYMENTS-GUIDE.md, "Reconciliation"). EPay V1 signs no answer: the merchant key
   * in the query authenticates us and HTTPS the aggregator. The URL carries the key, so it is never logged
   * and no error from here quotes it. The answer must name our pid and the order we asked about.
   */
  async function queryOrder(outTradeNo: string): Promise<QueryVerdict> {
    const query = new URLSearchParams({ act: 'order', pid, key, out_trade_no: outTradeNo });
    const answered = await callApi(`${queryUrl}?${query.toString()}`);
    if ('kind' in answered) return answered;
    return readQueryAnswer(outTradeNo, answered.text);
  }

  function readQueryAnswer(outTradeNo: string, answerText: string): QueryVerdict {
    const answer = parseJsonObject(answerText);
    if (!answer) return { kind: 'unknown', reason: 'malformed' };
    const code = String(answer.code);
    // -1: no such order (nobody reached the cashier yet, or the aggregator dropped it): nothing was paid.
    if (code === '-1') return { kind: 'not_paid', outTradeNo, reason: 'order does not exist at the channel' };
    if (code !== '1') return { kind: 'unknown', reason: 'channel_error', detail: code };
    if (String(answer.pid) !== pid) return { kind: 'unknown', reason: 'merchant', detail: 'pid is not ours' };
    if (answer.out_trade_no !== outTradeNo) return { kind: 'unknown', reason: 'order_mismatch' };
    // status 1 = paid, 0 = unpaid (docs/PAYMENTS-GUIDE.md).
    if (String(answer.status) !== '1') {
      return { kind: 'not_paid', outTradeNo, reason: `status ${String(answer.status)}` };
    }
    const money = answer.money;
    const amountCents = yuanToCents(
      typeof money === 'string' || typeof money === 'number' ? String(money) : '',
    );
    if (amountCents === undefined) {
      return { kind: 'unknown', reason: 'malformed', detail: 'money is not a valid amount' };
    }
    const tradeNo = answer.trade_no;
    return paidVerdict(outTradeNo, amountCents, typeof tradeNo === 'number' ? String(tradeNo) : tradeNo);
  }

  /**
   * api.php?act=refund (docs/PAYMENTS-GUIDE.md): pid and key in the form body, our out_trade_no and the money
   * in yuan; answered unsigned, `code` 1 when refunded. EPay keeps no refund number: a refund whose answer was
   * lost stays pending for a person to check, never asked again.
   */
  async function refund(input: ChannelRefundInput): Promise<RefundVerdict> {
    const body = new URLSearchParams({
      pid,
      key,
      out_trade_no: input.outTradeNo,
      money: centsToYuan(input.amountCents),
    });
    const answered = await callApi(`${queryUrl}?act=refund`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    if ('kind' in answered) return answered;
    const answer = parseJsonObject(answered.text);
    if (!answer) return { kind: 'unknown', reason: 'malformed' };
    if (String(answer.code) === '1') return { kind: 'succeeded' };
    return { kind: 'refused', detail: `code ${String(answer.code)}` };
  }

  return plainTextChannel(PROVIDER, {
    createOrder,
    verifyCallback,
    queryOrder,
    refund,
    queryOrigin: new URL(queryUrl).origin,
  });
}

/**
 * Constant-time comparison of hex digests. Upper-case hex is accepted (normalised to lower case) because some
 * EPay clones send it and the digest, not its spelling, is what proves knowledge of the key.
 */
function md5SignatureMatches(received: string, expected: string): boolean {
  if (received.length !== SIGN_HEX_LENGTH || !/^[0-9a-fA-F]+$/.test(received)) return false;
  return timingSafeEqual(Buffer.from(received.toLowerCase(), 'ascii'), Buffer.from(expected, 'ascii'));
}

function readMapiAnswer(answerText: string): ChannelOrder {
  let answer: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(answerText);
    if (typeof parsed !== 'object' || parsed === null) throw new TypeError('not an object');
    answer = parsed as Record<string, unknown>;
  } catch {
    throw new ChannelRequestError(PROVIDER, 'mapi.php answer is not JSON');
  }
  if (String(answer.code) !== '1') {
    throw new ChannelRequestError(PROVIDER, 'mapi.php refused the order', {
      detail:
        typeof answer.code === 'number' || typeof answer.code === 'string' ? String(answer.code) : undefined,
    });
  }
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
  const order: ChannelOrder = {};
  const payUrl = text(answer.payurl) ?? text(answer.urlscheme);
  const qrCode = text(answer.qrcode);
  const tradeNo = text(answer.trade_no);
  if (payUrl) order.payUrl = payUrl;
  if (qrCode) order.qrCode = qrCode;
  if (tradeNo) order.tradeNo = tradeNo;
  if (!order.payUrl && !order.qrCode) {
    throw new ChannelRequestError(PROVIDER, 'mapi.php answer has neither payurl nor qrcode');
  }
  return order;
}
