// The order desk: orders as their owners and administrators see them: placing one (and its channel
// order), reading, listing, cancelling, and the two confirmation paths a person takes (owner pays mock,
// admin writes off).

import { randomInt } from 'node:crypto';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { ChannelRequestError } from '#lib/billing/channels/errors.ts';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { type Clock, ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { CashierLinks } from './cashier.ts';
import { type CouponDesk, type Quote, unusableCoupon } from './coupon-desk.ts';
import { bucketsOf } from './coupons.ts';
import { notifyUrl } from './gateway-settings.ts';
import {
  type AdminOrderView,
  adminOrderView,
  CURRENCY,
  effectiveStatus,
  newOrderId,
  ORDER_ID_PATTERN,
  type OrderProvider,
  type OrderView,
  orderView,
  type StoredOrder,
} from './model.ts';
import type { OrderRepository } from './orders.ts';
import type { PlanCatalog } from './plan-catalog.ts';
import type { PlanRepository, SaleTerms } from './plans.ts';
import type { ReconcileSchedule } from './reconcile-schedule.ts';
import { type GatewayRegistry, type GatewaySource, isChannel } from './registry.ts';
import { requireMockCashier, type Settlement } from './settlement.ts';

export interface OrderDeskDeps {
  orders: OrderRepository;
  /** The plan as the table holds it: when this container holds none by that id, or its copy failed a check. */
  plans: PlanRepository;
  /** The active plans as this container holds them: what an order is drafted from. */
  catalog: PlanCatalog;
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
  /** Quotes a coupon code, takes and gives back its redemptions (docs/DESIGN.md 17). */
  coupons: CouponDesk;
  /** The buyers' usernames, for the back office's orders. */
  accounts: Pick<AccountRepository, 'usernamesOf'>;
}

/** Tries of an order's write with a coupon when other orders' transactions on the coupon collide with it. */
const REDEEM_ATTEMPTS = 12;

export class OrderDesk {
  constructor(private readonly deps: OrderDeskDeps) {}

  async createOrder(
    userId: string,
    input: { plan_id: string; provider?: string | undefined; coupon_code?: string | undefined },
    clientIp: string,
  ): Promise<OrderView> {
    // Both as this container holds them, as a rule without a read; when both are due, their reads go together.
    // A provider this container holds as off is checked against the table before it is refused.
    const [held, { registry }] = await Promise.all([
      this.deps.catalog.held(input.plan_id),
      this.deps.gateways.confirmed((held) => input.provider === undefined || held.has(input.provider)),
    ]);
    // A plan this container does not hold may be new: the table decides. A plan it holds is sold at the
    // terms it holds, which are at most CATALOGUE_STALENESS_MS behind the table (docs/PAYMENTS-GUIDE.md,
    // "Hot reload and its cost"): the terms the plans page showed the buyer. Checking the plan in the
    // order's write instead would make the plan's item take a write for every order of it.
    const plan: SaleTerms = held ?? (await this.planOnSale(input.plan_id));
    if (!held) this.deps.catalog.outdated();
    const quote =
      input.coupon_code === undefined
        ? undefined
        : (await this.deps.coupons.quote(input.coupon_code, [plan], { userId, ip: clientIp }))[0];
    // A coupon that takes the whole price makes a free order, settled at once whatever provider was asked for.
    const free = quote?.final_cents === 0;
    const asked = input.provider ?? registry.defaultProvider;
    if (!free && !registry.has(asked)) {
      throw errors.validation([
        { field: 'provider', message: `${asked} is not available (see GET /api/v1/payment-gateways)` },
      ]);
    }
    const provider: OrderProvider = free ? 'free' : (asked as OrderProvider);
    const draft = await this.draft(userId, plan, provider, registry, clientIp, quote);
    const firstCheck = isChannel(provider) ? this.deps.schedule.firstCheck(draft.at) : undefined;
    if (!quote) {
      // One write: the order whole, with its channel's answer and its place on the reconciler's schedule.
      await this.deps.orders.create(draft.order, draft.at, { firstCheck });
      return this.present(draft.order);
    }
    await this.placeWithCoupon(draft.order, draft.at, firstCheck, quote);
    if (!free) return this.present(draft.order);
    return this.present((await this.deps.settlement.confirm(draft.order, 'free')).order);
  }

  /**
   * The order and its coupon's redemption in one transaction (lib/billing/coupons.ts): one bucket of the
   * coupon's count below its share and the buyer's count below `per_account_limit`, or no order at all. The
   * first bucket is a random one; a bucket at its share sends the order to the next, so a limited coupon is
   * refused only when every bucket is full. Transactions of other orders that collide with it are tried
   * again; the buyer's count at its limit is the 400.
   */
  private async placeWithCoupon(order: StoredOrder, at: Date, firstCheck: Date | undefined, quote: Quote) {
    const { coupons, orders } = this.deps;
    const buckets = bucketsOf(quote.coupon);
    const first = randomInt(buckets);
    let full = 0;
    for (let attempt = 0; ; attempt += 1) {
      const bucket = (first + full) % buckets;
      const together = coupons.redeemItems(quote, bucket, order.user_id, order.id, order.deadline_ms);
      if (together === undefined) {
        full += 1;
        if (full >= buckets) throw unusableCoupon();
        continue;
      }
      try {
        await orders.create(order, at, { firstCheck, together });
        return;
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        // Place 1 is the bucket (after the order's put): full, so the next one, until every one is.
        if (error.failedItems.length === 1 && error.failedItems[0] === 1) {
          full += 1;
          if (full >= buckets) throw unusableCoupon();
          continue;
        }
        // The buyer's count at its limit.
        if (error.failedItems.length > 0) throw unusableCoupon();
        if (attempt + 1 >= REDEEM_ATTEMPTS + buckets) {
          throw errors.conflict('The coupon is being used by many orders at once; try again');
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * (attempt + 1)));
      }
    }
  }

  /**
   * POST /api/v1/coupons/validate: what `code` takes off the plan for this buyer now, or without a plan off
   * each plan on sale it can be used on (the console's one check for its whole catalogue).
   */
  async quoteCoupon(userId: string, code: string, planId: string | undefined, clientIp: string) {
    const plans = planId
      ? [(await this.deps.catalog.held(planId)) ?? (await this.planOnSale(planId))]
      : await this.deps.catalog.list(true);
    return this.deps.coupons.quote(code, plans, { userId, ip: clientIp });
  }

  /** The plan as the table holds it now, if it is on sale. */
  private async planOnSale(id: string): Promise<SaleTerms> {
    const plan = await this.deps.plans.get(id);
    if (!plan?.active) throw errors.notFound('Plan not found');
    return plan;
  }

  /**
   * The order as it will be written; for a channel, with the channel's answer (its pay URL or QR code).
   * The channel is asked BEFORE the order is written, so one write holds it whole. That is safe: nobody can
   * pay an order before receiving its pay URL or QR code, which only our response carries, after the write.
   * An order the channel made but we never recorded (the write failed, or the plan changed and it was
   * drafted again) cannot be paid by anyone, and the reconciler never looks for it. A channel that fails
   * leaves the order recorded as `failed` (one write), and the answer names it.
   */
  private async draft(
    userId: string,
    plan: SaleTerms,
    provider: OrderProvider,
    registry: GatewayRegistry,
    clientIp: string,
    quote?: Quote,
  ): Promise<{ order: StoredOrder; at: Date }> {
    const at = this.deps.clock();
    const created = isoWithOffset(at);
    const order: StoredOrder = {
      id: newOrderId(at),
      user_id: userId,
      plan_id: plan.id,
      plan_name: plan.name,
      amount_cents: quote ? quote.final_cents : plan.amount_cents,
      currency: CURRENCY,
      provider,
      status: 'pending',
      created_at: created,
      updated_at: created,
      deadline_ms: at.getTime() + this.deps.orderTtlMinutes * 60_000,
      // What it buys is fixed now, like the price (docs/DESIGN.md 11: settlement grants it).
      quota_bytes: plan.quota_bytes,
      duration_days: plan.duration_days,
      retention_days: plan.retention_days,
      ...(quote
        ? {
            coupon_code: quote.code,
            original_cents: quote.amount_cents,
            discount_cents: quote.discount_cents,
          }
        : {}),
    };
    if (!isChannel(provider)) return { order, at };
    const adapter = registry.channel(provider)!;
    // Where this order may later be asked about: a gateway changed afterwards is never sent its key for it.
    order.gateway_origin = adapter.queryOrigin;
    try {
      const answer = await adapter.createOrder({
        outTradeNo: order.id,
        amountCents: order.amount_cents,
        subject: plan.name,
        notifyUrl: notifyUrl(this.deps.notifyBaseUrl, provider),
        returnUrl: this.deps.returnUrl,
        clientIp,
        expiresAt: new Date(order.deadline_ms),
      });
      // Empty answers are not stored.
      if (answer.qrCode) order.qr_code = answer.qrCode;
      if (answer.payUrl) order.pay_url = answer.payUrl;
      if (answer.tradeNo) order.trade_no = answer.tradeNo;
      return { order, at };
    } catch (error) {
      await this.recordFailed(order, at, error);
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
  }

  /**
   * Kept, as `failed` and off the reconciler's schedule, so a surprising later payment still lands (flagged).
   * Not conditioned on the plan: it sells nothing.
   */
  private async recordFailed(order: StoredOrder, at: Date, error: unknown): Promise<void> {
    const failed: StoredOrder = {
      ...order,
      status: 'failed',
      failure_reason: error instanceof ChannelRequestError ? 'channel_unavailable' : 'internal_error',
      updated_at: isoWithOffset(this.deps.clock()),
    };
    await this.deps.orders.create(failed, at).catch((writeError) => {
      log.error('could not record a failed order', { order_id: order.id, error: writeError });
    });
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

  /** Every account's orders, each with its buyer's username: one batch read of the page's distinct buyers. */
  async listAllOrders(limit: number, cursor?: string): Promise<Page<AdminOrderView>> {
    const page = await this.deps.orders.listAll(limit, cursor);
    const names = await this.deps.accounts.usernamesOf(page.items.map((order) => order.user_id));
    return presentPage(page, (order) => this.presentForAdmin(order, names));
  }

  /** The owner cancels a pending order; cancelling a cancelled order again answers the same. */
  async cancelOwnOrder(userId: string, id: string): Promise<OrderView> {
    const { orders, clock } = this.deps;
    const order = await this.ownOrder(userId, id);
    try {
      if (order.coupon_code && order.status === 'pending') {
        // The redemption is given back in the cancel's own transaction.
        const released = await this.deps.coupons.release(id, [orders.cancelItem(id, userId, clock())]);
        if (released) return this.present((await orders.get(id))!);
      }
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

  /** One order for the back office; `names` when the caller read the buyers already (a listing). */
  async presentForAdmin(order: StoredOrder, names?: Map<string, string>): Promise<AdminOrderView> {
    const now = this.deps.clock();
    const [payUrl, known] = await Promise.all([
      this.payUrlOf(order, now),
      names ?? this.deps.accounts.usernamesOf([order.user_id]),
    ]);
    return adminOrderView(order, now, payUrl, known.get(order.user_id) ?? null);
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
