// Channel payment notices: the adapter's verdict on the signature, our own checks against the order, the
// settlement they may trigger, and the reply in the channel's own format.
import { errors } from '../http/errors.ts';
import { log } from '../log.ts';
import type { CallbackReply, CallbackRequest, CallbackVerdict } from './channels/types.ts';
import { ORDER_ID_PATTERN } from './model.ts';
import type { OrderRepository } from './orders.ts';
import { type GatewaySource, isChannel } from './registry.ts';
import type { Settlement } from './settlement.ts';

type PaidVerdict = Extract<CallbackVerdict, { kind: 'paid' }>;

export class CallbackReceiver {
  constructor(
    private readonly orders: OrderRepository,
    private readonly gateways: GatewaySource,
    private readonly settlement: Settlement,
  ) {}

  /**
   * POST|GET /api/v1/payments/{provider}/callback. Checks, in order: signature and merchant identity (the
   * adapter), the order exists, it is this provider's, the amount; then settles. Anything unverifiable
   * gets the channel's failure reply and changes nothing.
   */
  async handleCallback(provider: string, request: CallbackRequest): Promise<CallbackReply> {
    if (provider === 'mock' || provider === 'manual') {
      throw errors.forbidden(`${provider} orders are not confirmed by a channel callback`);
    }
    if (!isChannel(provider)) throw errors.notFound('No such payment channel');
    const { registry } = await this.gateways.current();
    const adapter = registry.channel(provider);
    if (!adapter) throw errors.notFound(`${provider} is not enabled`);

    let verdict: CallbackVerdict = await adapter.verifyCallback(request);
    if (verdict.kind === 'paid') {
      verdict = await this.settleFromCallback(provider, verdict);
    }
    if (verdict.kind === 'rejected') {
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

  /** An authentic notice still settles only our order of this provider and of exactly this amount. */
  private async settleFromCallback(provider: string, verdict: PaidVerdict): Promise<CallbackVerdict> {
    const order = ORDER_ID_PATTERN.test(verdict.outTradeNo)
      ? await this.orders.get(verdict.outTradeNo)
      : undefined;
    if (!order) return { kind: 'rejected', reason: 'unknown out_trade_no' };
    if (order.provider !== provider) return { kind: 'rejected', reason: 'order belongs to another provider' };
    if (order.amount_cents !== verdict.amountCents) {
      log.error('payment callback amount differs from the order', {
        provider,
        order_id: order.id,
        order_amount_cents: order.amount_cents,
        callback_amount_cents: verdict.amountCents,
      });
      return { kind: 'rejected', reason: 'amount does not match the order' };
    }
    await this.settlement.confirm(order, 'callback', verdict.tradeNo);
    return verdict;
  }
}
