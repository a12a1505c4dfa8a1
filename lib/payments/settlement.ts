// Settling an order: who may confirm it is fixed by its provider (SPEC.md 4.3 rule 1), and settlement is
// one conditional write whichever confirmation path gets there first; order.paid follows the write.
import { type Clock, ConditionFailedError } from '../db/repository.ts';
import type { OrderEventPublisher, OrderPaidDetail } from '../events/order-events.ts';
import { errors } from '../http/errors.ts';
import { log } from '../log.ts';
import { isoWithOffset } from '../time.ts';
import { effectiveStatus, type StoredOrder } from './model.ts';
import type { OrderRepository, SettleInput } from './orders.ts';
import type { GatewaySource } from './registry.ts';

/** Which confirmation path is knocking; each provider accepts exactly one (SPEC.md 4.3 rule 1). */
export type ConfirmPath = 'owner' | 'admin' | 'callback';

/** A duplicate confirmation re-publishes order.paid only if the winner apparently never did. */
const REPUBLISH_AFTER_MS = 60_000;
const MAX_SETTLE_ATTEMPTS = 4;

/** The owner's path (API or hosted cashier) is open to mock orders only, and only while mock is enabled. */
export async function requireMockCashier(order: StoredOrder, gateways: GatewaySource): Promise<void> {
  if (order.provider !== 'mock') {
    throw errors.forbidden(`A ${order.provider} order cannot be paid by its owner`);
  }
  const { registry } = await gateways.current();
  if (!registry.has('mock')) throw errors.forbidden('The mock cashier is disabled');
}

export class Settlement {
  constructor(
    private readonly orders: OrderRepository,
    private readonly events: OrderEventPublisher,
    private readonly clock: Clock,
  ) {}

  /**
   * Moves the order to `paid` through one conditional write from the status it was read in. Losing a race
   * re-reads and decides again: already paid means done (no second event), anything else is retried.
   */
  async confirm(
    initial: StoredOrder,
    path: ConfirmPath,
    tradeNo?: string,
  ): Promise<{ order: StoredOrder; settled: boolean }> {
    let order = initial;
    for (let attempt = 0; attempt < MAX_SETTLE_ATTEMPTS; attempt += 1) {
      const now = this.clock();
      const status = effectiveStatus(order, now);
      if (status === 'paid') {
        await this.afterDuplicate(order, tradeNo, now);
        return { order, settled: false };
      }
      const input = settlementFor(path, status, now, tradeNo);
      try {
        const settled = await this.orders.settle(order, input);
        if (settled.late_payment) {
          log.warn('late payment recorded on an order that was no longer payable', {
            order_id: settled.id,
            provider: settled.provider,
            status_before_payment: settled.status_before_payment,
          });
        }
        await this.publishPaid(settled);
        return { order: settled, settled: true };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        const current = await this.orders.get(order.id);
        if (!current) throw error;
        order = current;
      }
    }
    throw errors.conflict('The order is being changed by other requests; try again');
  }

  private async afterDuplicate(order: StoredOrder, tradeNo: string | undefined, now: Date): Promise<void> {
    if (tradeNo && order.trade_no && tradeNo !== order.trade_no) {
      log.error('second channel payment reported for a paid order: possible double payment', {
        order_id: order.id,
        provider: order.provider,
        trade_no: order.trade_no,
        other_trade_no: tradeNo,
      });
      await this.orders.recordExtraTradeNo(order.id, tradeNo, isoWithOffset(now)).catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
      });
    }
    const paidAt = order.paid_at ? Date.parse(order.paid_at) : now.getTime();
    if (!order.event_published_at && now.getTime() - paidAt > REPUBLISH_AFTER_MS) {
      await this.publishPaid(order);
    }
  }

  /** order.paid after the write committed; a failed publish is retried by the next duplicate confirmation. */
  private async publishPaid(order: StoredOrder): Promise<void> {
    const detail: OrderPaidDetail = {
      order_id: order.id,
      user_id: order.user_id,
      plan_id: order.plan_id,
      plan_name: order.plan_name,
      amount_cents: order.amount_cents,
      currency: order.currency,
      provider: order.provider,
      trade_no: order.trade_no ?? null,
      paid_at: order.paid_at ?? isoWithOffset(this.clock()),
      late_payment: order.late_payment ?? false,
    };
    try {
      await this.events.orderPaid(detail);
      await this.orders.markEventPublished(order.id, isoWithOffset(this.clock()));
    } catch (error) {
      log.error('order.paid could not be published', { order_id: order.id, error });
    }
  }
}

/** The write a path may make from the order's current status, or the 409 saying why it may not. */
function settlementFor(
  path: ConfirmPath,
  status: Exclude<ReturnType<typeof effectiveStatus>, 'paid'>,
  now: Date,
  tradeNo: string | undefined,
): SettleInput {
  const paidAt = isoWithOffset(now);
  if (path === 'owner') {
    // A user cannot pay an order that is cancelled, failed, or past its time.
    if (status !== 'pending') throw errors.conflict(`Order is ${status} and can no longer be paid`);
    return { expectedStatus: 'pending', requireUnexpiredAt: now, via: 'mock', now, paidAt };
  }
  if (path === 'admin') {
    // The administrator saw the money arrive; an expired manual order is still written off, flagged.
    if (status === 'pending') {
      return { expectedStatus: 'pending', requireUnexpiredAt: now, via: 'manual', now, paidAt };
    }
    if (status === 'expired') {
      return { expectedStatus: 'pending', lateFrom: 'expired', via: 'manual', now, paidAt };
    }
    throw errors.conflict(`Order is ${status} and can no longer be paid`);
  }
  // A verified callback means the money moved: it is recorded whatever became of the order (DESIGN.md 7).
  const base = { via: 'callback' as const, now, paidAt, ...(tradeNo ? { tradeNo } : {}) };
  if (status === 'pending') return { ...base, expectedStatus: 'pending' };
  if (status === 'expired') return { ...base, expectedStatus: 'pending', lateFrom: 'expired' };
  return { ...base, expectedStatus: status, lateFrom: status };
}
