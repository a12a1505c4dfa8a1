// channel_c wire protocol: EPay (易支付) V1, MD5-signed: submit.php / mapi.php orders and the notify.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ChannelRequestError } from '../../http/errors.ts';
import {
  formNotificationVerdict,
  parseUniqueParams,
  plainTextAcknowledgement,
  sortedSigningContent,
} from './form.ts';
import { centsToYuan } from './money.ts';
import { optionalHttpUrl, requireHttpUrl, requireSetting } from './settings.ts';
import type {
  CallbackRequest,
  CallbackVerdict,
  ChannelOrder,
  CreateChannelOrderInput,
  SynchronousChannelAdapter,
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

export function createChannelC(settings: ChannelCSettings): SynchronousChannelAdapter {
  const pid = requireSetting('pid', settings.pid);
  requireSetting('key', settings.key);
  // Used exactly as configured: trimming would silently sign with a different secret.
  const key = settings.key;
  const gatewayUrl = requireHttpUrl('gatewayUrl', settings.gatewayUrl);
  const apiUrl = optionalHttpUrl('apiUrl', settings.apiUrl);
  const mapiUrl = apiUrl && (/\.php$/.test(new URL(apiUrl).pathname) ? apiUrl : joinUrl(apiUrl, 'mapi.php'));
  const submitUrl = optionalHttpUrl('submitUrl', settings.submitUrl) ?? joinUrl(gatewayUrl, 'submit.php');
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
    const params = parseUniqueParams(source);
    if (!params) {
      return { kind: 'rejected', reason: 'repeated parameter' };
    }
    const signature = params.get('sign');
    if (!signature) {
      return { kind: 'rejected', reason: 'missing signature' };
    }
    const signType = params.get('sign_type');
    if (signType !== undefined && signType.toUpperCase() !== 'MD5') {
      return { kind: 'rejected', reason: 'unsupported sign_type' };
    }
    if (!md5SignatureMatches(signature, signEpayParams(params, key))) {
      return { kind: 'rejected', reason: 'signature does not verify' };
    }
    if (params.get('pid') !== pid) {
      return { kind: 'rejected', reason: 'pid is not ours' };
    }
    return formNotificationVerdict(params, {
      isPaid: (status) => status === 'TRADE_SUCCESS',
      notPaidReason: (status) => `trade_status ${status || 'missing'}`,
      amountField: 'money',
    });
  }

  return { provider: PROVIDER, createOrder, verifyCallback, acknowledge: plainTextAcknowledgement };
}

/**
 * Constant-time comparison of hex digests. Upper-case hex is accepted (normalised to lower case) because some
 * EPay clones send it and the digest, not its spelling, is what proves knowledge of the key.
 */
function md5SignatureMatches(received: string, expected: string): boolean {
  if (received.length !== SIGN_HEX_LENGTH || !/^[0-9a-fA-F]+$/.test(received)) {
    return false;
  }
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
