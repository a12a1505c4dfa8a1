// The order desk: orders as their owners and administrators see them: placing one (and its channel
// order), reading, listing, cancelling, and the two confirmation paths a person takes (owner pays mock,
// admin writes off).

import { ChannelRequestError } from '#lib/billing/channels/errors.ts';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { type Clock, ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { CashierLinks } from './cashier.ts';
import { notifyUrl } from './gateway-settings.ts';
import {
  type AdminOrderView,
  adminOrderView,
  CURRENCY,
  effectiveStatus,
  newOrderId,
  ORDER_ID_PATTERN,
  type OrderView,
  orderView,
  type StoredOrder,
} from './model.ts';
import type { OrderRepository } from './orders.ts';
import type { PlanRepository } from './plans.ts';
import type { ReconcileSchedule } from './reconcile-schedule.ts';
import { type GatewaySource, isChannel } from './registry.ts';
import { requireMockCashier, type Settlement } from './settlement.ts';

export interface OrderDeskDeps {
  orders: OrderRepository;
  plans: PlanRepository;
  gateways: GatewaySource;
  cashier: CashierLinks;
  settlement: Settlement;
  clock: Clock;
  orderTtlMinutes: number;
  /** When a channel order is first asked about at its channel, should its callback not come. */
  schedule: ReconcileSchedule;
  /** Where channel_c's cashier sends the payer back. */
  returnUrl: string;
  /** `payment.notify_base_url ?? base_url`, without a trailing slash: where channels notify. */
  notifyBaseUrl: string;
}

export class OrderDesk {
  constructor(private readonly deps: OrderDeskDeps) {}

  async createOrder(
    userId: string,
    input: { plan_id: string; provider?: string | undefined },
    clientIp: string,
  ): Promise<OrderView> {
    const { orders, plans, clock } = this.deps;
    const plan = await plans.get(input.plan_id);
    if (!plan?.active) throw errors.notFound('Plan not found');
    // A provider this container holds as off is checked against the table before it is refused.
    const { registry } = await this.deps.gateways.confirmed(
      (held) => input.provider === undefined || held.has(input.provider),
    );
    const provider = input.provider ?? registry.defaultProvider;
    if (!registry.has(provider)) {
      throw errors.validation([
        { field: 'provider', message: `${provider} is not available (see GET /api/v1/payment-gateways)` },
      ]);
    }
    const now = clock();
    const created = isoWithOffset(now);
    let order: StoredOrder = {
      id: newOrderId(now),
      user_id: userId,
      plan_id: plan.id,
      plan_name: plan.name,
      amount_cents: plan.amount_cents,
      currency: CURRENCY,
      provider,
      status: 'pending',
      created_at: created,
      updated_at: created,
      deadline_ms: now.getTime() + this.deps.orderTtlMinutes * 60_000,
      // What it buys is fixed now, like the price (docs/DESIGN.md 11: settlement grants it).
      quota_bytes: plan.quota_bytes,
      duration_days: plan.duration_days,
    };
    // The order exists before the channel hears of it, so a callback can never outrun its record; a
    // channel order is on the reconciler's schedule from the start, so no lost callback leaves it unasked.
    const channel = isChannel(provider);
    await orders.create(order, now, channel ? this.deps.schedule.firstCheck(now) : undefined);
    if (channel) {
      const adapter = registry.channel(provider)!;
      let answer: Awaited<ReturnType<typeof adapter.createOrder>>;
      try {
        answer = await adapter.createOrder({
          outTradeNo: order.id,
          amountCents: order.amount_cents,
          subject: plan.name,
          notifyUrl: notifyUrl(this.deps.notifyBaseUrl, provider),
          returnUrl: this.deps.returnUrl,
          clientIp,
          expiresAt: new Date(order.deadline_ms),
        });
      } catch (error) {
        // Not left half-made: the order is marked failed (kept, so a surprising later payment still lands).
        const reason = error instanceof ChannelRequestError ? 'channel_unavailable' : 'internal_error';
        await orders.markFailed(order.id, reason, isoWithOffset(clock())).catch((markError) => {
          log.error('could not mark an order failed', { order_id: order.id, error: markError });
        });
        if (error instanceof ChannelRequestError) {
          // The gateway's own words stay in the log; the caller learns which order failed, and where.
          log.warn('payment channel refused or failed an order', {
            provider,
            order_id: order.id,
            problem: error.message,
            detail: error.detail,
          });
          throw errors.channelUnavailable(order.id, provider);
        }
        throw error;
      }
      order = await orders.attachChannelOrder(
        order.id,
        { qr_code: answer.qrCode, pay_url: answer.payUrl, trade_no: answer.tradeNo },
        isoWithOffset(clock()),
      );
    }
    return this.present(order);
  }

  async present(order: StoredOrder): Promise<OrderView> {
    const now = this.deps.clock();
    return orderView(order, now, await this.payUrlOf(order, now));
  }

  async getOwnOrder(userId: string, id: string): Promise<OrderView> {
    return this.present(await this.ownOrder(userId, id));
  }

  async listOwnOrders(userId: string, limit: number, cursor?: string): Promise<Page<OrderView>> {
    return presentPage(await this.deps.orders.listByUser(userId, limit, cursor), (order) =>
      this.present(order),
    );
  }

  async listAllOrders(limit: number, cursor?: string): Promise<Page<AdminOrderView>> {
    return presentPage(await this.deps.orders.listAll(limit, cursor), (order) => this.presentForAdmin(order));
  }

  /** The owner cancels a pending order; cancelling a cancelled order again answers the same. */
  async cancelOwnOrder(userId: string, id: string): Promise<OrderView> {
    const { orders, clock } = this.deps;
    const order = await this.ownOrder(userId, id);
    try {
      return this.present(await orders.cancel(id, userId, clock()));
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const current = (await orders.get(id)) ?? order;
      const status = effectiveStatus(current, clock());
      if (status === 'cancelled') return this.present(current);
      throw errors.conflict(`Order is ${status} and can no longer be cancelled`);
    }
  }

  /** POST /api/v1/orders/{id}/pay: the owner completes a mock order; any other provider is 403. */
  async payOwnMockOrder(userId: string, id: string): Promise<OrderView> {
    const order = await this.ownOrder(userId, id);
    await requireMockCashier(order, this.deps.gateways);
    return this.present((await this.deps.settlement.confirm(order, 'owner')).order);
  }

  /** POST /api/v1/admin/orders/{id}/pay: manual write-off; any other provider is 403. */
  async writeOffManualOrder(id: string): Promise<AdminOrderView> {
    const order = ORDER_ID_PATTERN.test(id) ? await this.deps.orders.get(id) : undefined;
    if (!order) throw errors.notFound('Order not found');
    if (order.provider !== 'manual') {
      throw errors.forbidden(`A ${order.provider} order is not confirmed by an administrator write-off`);
    }
    return this.presentForAdmin((await this.deps.settlement.confirm(order, 'admin')).order);
  }

  private async ownOrder(userId: string, id: string): Promise<StoredOrder> {
    const order = ORDER_ID_PATTERN.test(id) ? await this.deps.orders.get(id) : undefined;
    // Someone else's order is indistinguishable from a missing one (docs/DESIGN.md 4).
    if (!order || order.user_id !== userId) throw errors.notFound('Order not found');
    return order;
  }

  private async presentForAdmin(order: StoredOrder): Promise<AdminOrderView> {
    const now = this.deps.clock();
    return adminOrderView(order, now, await this.payUrlOf(order, now));
  }

  /** A channel's own pay link; for mock, a fresh cashier link while the order can still be paid. */
  private async payUrlOf(order: StoredOrder, now: Date): Promise<string | null> {
    if (order.provider !== 'mock') return order.pay_url ?? null;
    return effectiveStatus(order, now) === 'pending' ? this.deps.cashier.linkFor(order, now) : null;
  }
}

async function presentPage<V>(page: Page<StoredOrder>, present: (order: StoredOrder) => Promise<V>) {
  return { items: await Promise.all(page.items.map(present)), next_cursor: page.next_cursor };
}
