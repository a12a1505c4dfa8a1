// The contract between the payments service and the wire-protocol adapters of channel_a, _b and _c.

export type ChannelProvider = 'channel_a' | 'channel_b' | 'channel_c';

export interface CreateChannelOrderInput {
  /** Our order id, sent as out_trade_no (at most 32 characters of [0-9A-Za-z]). */
  outTradeNo: string;
  amountCents: number;
  subject: string;
  notifyUrl: string;
  /** Where the payer's browser returns after paying; only the channel_c cashier page uses it. */
  returnUrl?: string;
  clientIp?: string;
  expiresAt?: Date;
}

export interface ChannelOrder {
  qrCode?: string;
  payUrl?: string;
  tradeNo?: string;
}

export interface CallbackRequest {
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The body exactly as received (already base64-decoded when API Gateway encoded it). */
  rawBody: Buffer;
  /** The query string without the leading `?`. */
  rawQuery: string;
}

export type CallbackVerdict =
  /** Authentic payment notice; the caller still checks the order, its provider and the amount. */
  | { kind: 'paid'; outTradeNo: string; amountCents: number; tradeNo?: string }
  /** Authentic but not a payment (e.g. WAIT_BUYER_PAY): acknowledge so the channel stops re-sending. */
  | { kind: 'ignored'; outTradeNo?: string; reason: string }
  /** Not verifiable or not for us: answer 4xx and change nothing. */
  | { kind: 'rejected'; reason: string }
  /** Authentic refund notice (channel_b): the result of one of our refunds (`refundNo`), acknowledged. */
  | { kind: 'refund'; outTradeNo: string; refundNo: string; result: 'succeeded' | 'failed' | 'pending' };

/**
 * The channel's answer to our own query about one order (docs/PAYMENTS-GUIDE.md, "Reconciliation"), shaped
 * like a callback verdict. `paid` only when the answer verified exactly as the channel requires (response
 * signature, merchant identity, the order we asked about); the caller still checks the order, its provider
 * and the amount, exactly as for a callback.
 */
export type QueryVerdict =
  | { kind: 'paid'; outTradeNo: string; amountCents: number; tradeNo?: string }
  /** Authentic: the channel has no payment for this order (unknown to it, waiting, closed). */
  | { kind: 'not_paid'; outTradeNo: string; reason: string }
  /**
   * No usable answer: unreachable, an HTTP error, garbage, a signature that does not verify, another
   * merchant's or another order's answer. Never a payment; the next run asks again. `reason` is a short,
   * low-cardinality code (a metric dimension) and `detail` a secret-free hint for the log.
   */
  | { kind: 'unknown'; reason: QueryFailureReason; detail?: string };

/** A `paid` verdict, naming the channel's trade number only when it is a non-empty string. */
export function paidVerdict(outTradeNo: string, amountCents: number, tradeNo: unknown) {
  return typeof tradeNo === 'string' && tradeNo !== ''
    ? { kind: 'paid' as const, outTradeNo, amountCents, tradeNo }
    : { kind: 'paid' as const, outTradeNo, amountCents };
}

export type QueryFailureReason =
  | 'unreachable'
  | 'http_status'
  | 'malformed'
  | 'signature'
  | 'merchant'
  | 'order_mismatch'
  | 'channel_error';

export interface CallbackReply {
  status: number;
  contentType: string;
  body: string;
}

/** A refund asked of the channel (docs/DESIGN.md 17). */
export interface ChannelRefundInput {
  outTradeNo: string;
  /** The channel's trade number of the payment, when it gave one. */
  tradeNo?: string | undefined;
  /** Our refund's id: the channel's idempotency key where it has one. */
  refundNo: string;
  /** Where a channel that answers later (channel_b) sends its refund notice. */
  notifyUrl: string;
  amountCents: number;
  /** What the order was paid in total. */
  totalCents: number;
  reason: string;
}

/**
 * The channel's answer to a refund: `succeeded` (the money is on its way back), `pending` (accepted, the
 * result comes later), `refused` (the channel said no: nothing was refunded), or `unknown` (no usable answer:
 * the refund stays pending for a person or a later query).
 */
export type RefundVerdict =
  | { kind: 'succeeded' }
  | { kind: 'pending' }
  | { kind: 'refused'; detail: string }
  | { kind: 'unknown'; reason: QueryFailureReason; detail?: string };

export interface ChannelAdapter {
  readonly provider: ChannelProvider;
  /**
   * The origin (`https://host:port`) this adapter's order queries go to, and the only one whose answer they
   * read: recorded on each order when it is placed, so reconciliation never asks another host about it
   * (lib/billing/reconcile.ts).
   */
  readonly queryOrigin: string;
  createOrder(input: CreateChannelOrderInput): Promise<ChannelOrder>;
  verifyCallback(request: CallbackRequest, now?: Date): Promise<CallbackVerdict> | CallbackVerdict;
  /** The exact reply the channel expects for this verdict. */
  acknowledge(verdict: CallbackVerdict): CallbackReply;
  /** Asks the channel about one of our orders (its out_trade_no); never throws, failures are `unknown`. */
  queryOrder(outTradeNo: string): Promise<QueryVerdict>;
  /** Refunds (part of) a paid order through the channel's refund interface; never throws. Absent: not offered. */
  refund?(input: ChannelRefundInput): Promise<RefundVerdict>;
  /**
   * Asks the channel what became of one of our refunds (reconciliation of a refund left pending); never
   * throws. `refused`: the channel has no such refund made. Absent: the channel offers no such query.
   */
  queryRefund?(outTradeNo: string, refundNo: string): Promise<RefundVerdict>;
}

/** What the built-in factories return: their verification needs no I/O, so it answers synchronously. */
export interface SynchronousChannelAdapter extends ChannelAdapter {
  verifyCallback(request: CallbackRequest, now?: Date): CallbackVerdict;
}
