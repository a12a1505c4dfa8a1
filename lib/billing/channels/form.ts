// Form/query parameter helpers shared by the channels that sign sorted `key=value&...` strings.
import { yuanToCents } from './money.ts';
import {
  type CallbackReply,
  type CallbackVerdict,
  paidVerdict,
  type SynchronousChannelAdapter,
} from './types.ts';

/**
 * The first checks of a signed form notification (channel_a, channel_c): parameters unique, a signature
 * present, a sign_type this channel accepts (absent is accepted). The signature itself is the caller's.
 */
export function signedFormParams(
  source: string,
  acceptsSignType: (signType: string) => boolean,
): { params: Map<string, string>; signature: string } | { refused: CallbackVerdict } {
  const params = new Map<string, string>();
  // Parsed exactly once (no second decoding); a repeated name would make "which value was signed" ambiguous.
  for (const [name, value] of new URLSearchParams(source)) {
    if (params.has(name)) return { refused: { kind: 'rejected', reason: 'repeated parameter' } };
    params.set(name, value);
  }
  const signature = params.get('sign');
  if (!signature) return { refused: { kind: 'rejected', reason: 'missing signature' } };
  const signType = params.get('sign_type');
  if (signType !== undefined && !acceptsSignType(signType)) {
    return { refused: { kind: 'rejected', reason: 'unsupported sign_type' } };
  }
  return { params, signature };
}

/** An adapter of a channel that is answered with the bare word `success`, or `fail` (channel_a, channel_c). */
export function plainTextChannel(
  provider: SynchronousChannelAdapter['provider'],
  calls: Pick<
    SynchronousChannelAdapter,
    'createOrder' | 'verifyCallback' | 'queryOrder' | 'queryOrigin' | 'refund' | 'queryRefund'
  >,
): SynchronousChannelAdapter {
  const acknowledge = (verdict: CallbackVerdict): CallbackReply => {
    const rejected = verdict.kind === 'rejected';
    return {
      status: rejected ? 400 : 200,
      contentType: 'text/plain; charset=utf-8',
      body: rejected ? 'fail' : 'success',
    };
  };
  return { provider, ...calls, acknowledge };
}

/** `k=v&k=v` over the non-empty parameters not in `excluded`, keys in ASCII order, values raw. */
export function sortedSigningContent(params: Map<string, string>, excluded: readonly string[]): string {
  return [...params.entries()]
    .filter(([name, value]) => value !== '' && !excluded.includes(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const BEIJING_OFFSET_MS = 8 * 60 * 60 * 1000;

function beijingParts(instant: Date): string[] {
  const shifted = new Date(instant.getTime() + BEIJING_OFFSET_MS).toISOString();
  // 2024-01-01T12:00:00.000Z -> date and time of the same wall clock in UTC+8.
  return [shifted.slice(0, 10), shifted.slice(11, 19)];
}

/** `yyyy-MM-dd HH:mm:ss` in Beijing time, whatever the process TZ (Lambda runs in UTC). */
export function beijingDateTime(instant: Date): string {
  const [date, time] = beijingParts(instant);
  return `${date} ${time}`;
}

/** RFC 3339 with an explicit +08:00 offset, the form WeChat Pay documents for time_expire. */
export function beijingRfc3339(instant: Date): string {
  const [date, time] = beijingParts(instant);
  return `${date}T${time}+08:00`;
}

/**
 * The verdict of a verified form notification (channel_a, channel_c): not a payment status is ignored
 * (still acknowledged), a payment names its order and an amount in cents, anything else is rejected.
 */
export function formNotificationVerdict(
  params: Map<string, string>,
  rules: {
    isPaid: (status: string) => boolean;
    notPaidReason: (status: string) => string;
    amountField: string;
  },
): CallbackVerdict {
  const outTradeNo = params.get('out_trade_no') ?? '';
  const status = params.get('trade_status') ?? '';
  if (!rules.isPaid(status)) {
    const reason = rules.notPaidReason(status);
    return outTradeNo ? { kind: 'ignored', outTradeNo, reason } : { kind: 'ignored', reason };
  }
  if (!outTradeNo) return { kind: 'rejected', reason: 'missing out_trade_no' };
  const amountCents = yuanToCents(params.get(rules.amountField) ?? '');
  if (amountCents === undefined)
    return { kind: 'rejected', reason: `${rules.amountField} is not a valid amount` };
  return paidVerdict(outTradeNo, amountCents, params.get('trade_no'));
}
