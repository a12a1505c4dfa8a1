// Channel payment notices: the adapter's verdict on the signature, our own checks against the order, the
// settlement they may trigger, and the reply in the channel's own format.

import type { CallbackReply, CallbackRequest, CallbackVerdict } from '#lib/billing/channels/types.ts';
import { errors } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { ORDER_ID_PATTERN, type StoredOrder } from './model.ts';
import type { OrderRepository } from './orders.ts';
import type { RefundCompletion } from './refund-completion.ts';
import { type GatewaySource, isChannel } from './registry.ts';
import type { ConfirmPath, Settlement } from './settlement.ts';

/**
 * Counts a refused notice per provider and reason (docs/OBSERVABILITY.md): the reasons are the fixed phrases
 * of the adapters and of the checks below, as a short slug (`signature_does_not_verify`).
 */
function countRefused(provider: string, reason: string): void {
  const slug = reason
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  recordMetric('CallbacksRefused', { dimensions: { provider, reason: slug || 'unspecified' } });
}

export interface CallbackReceiverDeps {
  orders: OrderRepository;
  gateways: GatewaySource;
  settlement: Settlement;
  /** Applies a channel's refund notice (channel_b) to the refund it names. */
  refunds: Pick<RefundCompletion, 'completeByNotice'>;
}

export class CallbackReceiver {
  constructor(private readonly deps: CallbackReceiverDeps) {}

  /**
   * POST|GET /api/v1/payments/{provider}/callback. Checks, in order: signature and merchant identity (the
   * adapter), the order exists, it is this provider's, the amount; then settles. Anything unverifiable
   * gets the channel's failure reply and changes nothing.
   */
  async handleCallback(provider: string, request: CallbackRequest): Promise<CallbackReply> {
    if (provider === 'mock' || provider === 'manual') {
      countRefused(provider, 'not a channel');
      throw errors.forbidden(`${provider} orders are not confirmed by a channel callback`);
    }
    if (!isChannel(provider)) {
      // Not a provider name we know: not worth a dimension value of its own.
      countRefused('unknown', 'no such channel');
      throw errors.notFound('No such payment channel');
    }
    // A channel this container holds as off is checked against the table before the notice is refused.
    const { registry } = await this.deps.gateways.confirmed((held) => held.channel(provider) !== undefined);
    const adapter = registry.channel(provider);
    if (!adapter) {
      countRefused(provider, 'channel not enabled');
      throw errors.notFound(`${provider} is not enabled`);
    }

    let verdict: CallbackVerdict = await adapter.verifyCallback(request);
    if (verdict.kind === 'paid') {
      // An authentic notice still settles only our order of this provider and of exactly this amount.
      const outcome = await settleReportedPayment(this.deps, provider, verdict, 'callback');
      if (outcome.kind === 'refused') verdict = { kind: 'rejected', reason: outcome.reason };
    } else if (verdict.kind === 'refund') {
      const applied = await this.deps.refunds.completeByNotice(provider, verdict);
      if (applied === 'unknown') verdict = { kind: 'rejected', reason: 'unknown refund' };
      else
        log.info('refund notice applied', { provider, order_id: verdict.outTradeNo, result: verdict.result });
    }
    if (verdict.kind === 'rejected') {
      countRefused(provider, verdict.reason);
      log.warn('payment callback rejected', { provider, reason: verdict.reason });
    } else if (verdict.kind === 'ignored') {
      log.info('payment callback acknowledged without a payment', {
        provider,
        order_id: verdict.outTradeNo,
        reason: verdict.reason,
      });
    }
    return adapter.acknowledge(verdict);
  }
}

/** What came of a channel's authentic report of a payment (a verified callback or query answer). */
export type ReportedPaymentOutcome =
  | { kind: 'settled' | 'already_paid'; order: StoredOrder }
  | { kind: 'refused'; reason: string; code: 'unknown_order' | 'provider_mismatch' | 'amount_mismatch' };

/**
 * The checks every channel report of a payment passes before it settles, whichever way it arrived (the
 * adapter has already checked the signature and the merchant identity): the order exists, it is this
 * provider's, the amount equals it in cents. Then one settlement; a lost race answers `already_paid`.
 */
export async function settleReportedPayment(
  { orders, settlement }: { orders: OrderRepository; settlement: Settlement },
  provider: string,
  report: { outTradeNo: string; amountCents: number; tradeNo?: string },
  path: Extract<ConfirmPath, 'callback' | 'reconciliation'>,
): Promise<ReportedPaymentOutcome> {
  const order = ORDER_ID_PATTERN.test(report.outTradeNo) ? await orders.get(report.outTradeNo) : undefined;
  if (!order) return { kind: 'refused', reason: 'unknown out_trade_no', code: 'unknown_order' };
  if (order.provider !== provider) {
    return { kind: 'refused', reason: 'order belongs to another provider', code: 'provider_mismatch' };
  }
  if (order.amount_cents !== report.amountCents) {
    log.error(`payment ${path} amount differs from the order`, {
      provider,
      order_id: order.id,
      order_amount_cents: order.amount_cents,
      [`${path}_amount_cents`]: report.amountCents,
    });
    return { kind: 'refused', reason: 'amount does not match the order', code: 'amount_mismatch' };
  }
  const result = await settlement.confirm(order, path, report.tradeNo);
  return { kind: result.settled ? 'settled' : 'already_paid', order: result.order };
}
