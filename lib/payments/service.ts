// Plans, orders and their confirmation: who may settle an order is fixed by its provider (SPEC.md 4.3
// rule 1), and settlement is one conditional write whichever path gets there first.
import { TokenError } from '../auth/tokens.ts';
import { ConditionFailedError, type Table } from '../db/repository.ts';
import type { OrderEventPublisher, OrderPaidDetail } from '../events/order-events.ts';
import { AppError, errors } from '../http/errors.ts';
import { log } from '../log.ts';
import { isoWithOffset } from '../time.ts';
import { type CashierLinks, cashierErrorPage, cashierPage } from './cashier.ts';
import { ChannelRequestError } from './channels/errors.ts';
import type { CallbackReply, CallbackRequest, CallbackVerdict } from './channels/types.ts';
import {
  type AdminOrderView,
  adminOrderView,
  CURRENCY,
  effectiveStatus,
  newOrderId,
  ORDER_ID_PATTERN,
  type OrderView,
  orderView,
  planView,
  type StoredOrder,
} from './model.ts';
import { OrderRepository, type Page, type SettleInput } from './orders.ts';
import { type NewPlan, type PlanChanges, PlanRepository } from './plans.ts';
import { type GatewaySource, isChannel, validateSettings } from './registry.ts';
import {
  CHANNELS,
  maskSettings,
  mergeSettings,
  type PaymentSettingsStore,
  type SettingsPatch,
} from './settings.ts';

export interface PaymentServiceDeps {
  table: Table;
  store: PaymentSettingsStore;
  gateways: GatewaySource;
  cashier: CashierLinks;
  events: OrderEventPublisher;
  stage: string;
  orderTtlMinutes: number;
  /** `payment.notify_base_url ?? base_url`, without a trailing slash. */
  notifyBaseUrl: string;
  /** Where channel_c's cashier sends the payer back. */
  returnUrl: string;
  clock?: () => Date;
}

/** Which confirmation path is knocking; each provider accepts exactly one (SPEC.md 4.3 rule 1). */
type ConfirmPath = 'owner' | 'admin' | 'callback';

/** A duplicate confirmation re-publishes order.paid only if the winner apparently never did. */
const REPUBLISH_AFTER_MS = 60_000;
const MAX_SETTLE_ATTEMPTS = 4;

export interface PageResult {
  status: number;
  html: string;
}

export class PaymentService {
  readonly plans: PlanRepository;
  readonly orders: OrderRepository;
  private readonly clock: () => Date;

  constructor(private readonly deps: PaymentServiceDeps) {
    this.plans = new PlanRepository(deps.table);
    this.orders = new OrderRepository(deps.table);
    this.clock = deps.clock ?? deps.table.clock;
  }

  // ---- plans -------------------------------------------------------------------------------------

  async listPlans(activeOnly: boolean) {
    return (await this.plans.list({ activeOnly })).map(planView);
  }

  async createPlan(input: NewPlan) {
    return planView(await this.plans.create(input));
  }

  async updatePlan(id: string, changes: PlanChanges) {
    return planView(await this.plans.update(id, changes));
  }

  async deletePlan(id: string) {
    await this.plans.delete(id);
    return { id, deleted: true };
  }

  // ---- gateways and settings ---------------------------------------------------------------------

  async listGateways(): Promise<string[]> {
    return (await this.deps.gateways.current()).registry.providers;
  }

  notifyUrl(provider: string): string {
    return `${this.deps.notifyBaseUrl}/api/v1/payments/${provider}/callback`;
  }

  private notifyUrls() {
    return Object.fromEntries(CHANNELS.map((name) => [name, this.notifyUrl(name)]));
  }

  async readSettings() {
    const live = await this.deps.gateways.current();
    return { ...maskSettings(live.settings), notify_urls: this.notifyUrls() };
  }

  /** Merge, validate the whole result, then store: a bad value changes nothing (400 naming the field). */
  async updateSettings(patch: SettingsPatch) {
    const live = await this.deps.gateways.current();
    const next = mergeSettings(live.settings, patch);
    validateSettings(next, this.deps.stage);
    const saved = await this.deps.store.save(next, live.version);
    this.deps.gateways.replace(saved);
    log.info('payment settings saved', { version: saved.version });
    return { ...maskSettings(saved.settings), notify_urls: this.notifyUrls() };
  }

  // ---- orders ------------------------------------------------------------------------------------

  async createOrder(
    userId: string,
    input: { plan_id: string; provider?: string | undefined },
    clientIp: string,
  ): Promise<OrderView> {
    const plan = await this.plans.get(input.plan_id);
    if (!plan?.active) throw errors.notFound('Plan not found');
    const { registry } = await this.deps.gateways.current();
    const provider = input.provider ?? registry.defaultProvider;
    if (!registry.has(provider)) {
      throw errors.validation([
        { field: 'provider', message: `${provider} is not available (see GET /api/v1/payment-gateways)` },
      ]);
    }
    const now = this.clock();
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
    };
    // The order exists before the channel hears of it, so a callback can never outrun its record.
    await this.orders.create(order, now);
    if (isChannel(provider)) {
      const adapter = registry.channel(provider)!;
      let answer: Awaited<ReturnType<typeof adapter.createOrder>>;
      try {
        answer = await adapter.createOrder({
          outTradeNo: order.id,
          amountCents: order.amount_cents,
          subject: plan.name,
          notifyUrl: this.notifyUrl(provider),
          returnUrl: this.deps.returnUrl,
          clientIp,
          expiresAt: new Date(order.deadline_ms),
        });
      } catch (error) {
        // Not left half-made: the order is marked failed (kept, so a surprising later payment still lands).
        const reason = error instanceof ChannelRequestError ? 'channel_unavailable' : 'internal_error';
        await this.orders.markFailed(order.id, reason, isoWithOffset(this.clock())).catch((markError) => {
          log.error('could not mark an order failed', { order_id: order.id, error: markError });
        });
        if (error instanceof ChannelRequestError) {
          log.warn('payment channel refused or failed an order', {
            provider,
            order_id: order.id,
            problem: error.message,
            detail: error.detail,
          });
          throw new AppError(502, 'bad_gateway', 'payment channel unavailable', {
            expose: true,
            data: { order_id: order.id, provider },
          });
        }
        throw error;
      }
      order = await this.orders.attachChannelOrder(
        order.id,
        { qr_code: answer.qrCode, pay_url: answer.payUrl, trade_no: answer.tradeNo },
        isoWithOffset(this.clock()),
      );
    }
    return this.present(order);
  }

  private async payUrlOf(order: StoredOrder, now: Date): Promise<string | null> {
    if (order.provider !== 'mock') return order.pay_url ?? null;
    return effectiveStatus(order, now) === 'pending' ? this.deps.cashier.linkFor(order, now) : null;
  }

  async present(order: StoredOrder): Promise<OrderView> {
    const now = this.clock();
    return orderView(order, now, await this.payUrlOf(order, now));
  }

  private async presentForAdmin(order: StoredOrder): Promise<AdminOrderView> {
    const now = this.clock();
    return adminOrderView(order, now, await this.payUrlOf(order, now));
  }

  private async ownOrder(userId: string, id: string): Promise<StoredOrder> {
    const order = ORDER_ID_PATTERN.test(id) ? await this.orders.get(id) : undefined;
    // Someone else's order is indistinguishable from a missing one (DESIGN.md 4).
    if (!order || order.user_id !== userId) throw errors.notFound('Order not found');
    return order;
  }

  async getOwnOrder(userId: string, id: string): Promise<OrderView> {
    return this.present(await this.ownOrder(userId, id));
  }

  async listOwnOrders(userId: string, limit: number, cursor?: string): Promise<Page<OrderView>> {
    const page = await this.orders.listByUser(userId, limit, cursor);
    return {
      items: await Promise.all(page.items.map((order) => this.present(order))),
      next_cursor: page.next_cursor,
    };
  }

  async listAllOrders(limit: number, cursor?: string): Promise<Page<AdminOrderView>> {
    const page = await this.orders.listAll(limit, cursor);
    return {
      items: await Promise.all(page.items.map((order) => this.presentForAdmin(order))),
      next_cursor: page.next_cursor,
    };
  }

  /** The owner cancels a pending order; cancelling a cancelled order again answers the same. */
  async cancelOwnOrder(userId: string, id: string): Promise<OrderView> {
    const order = await this.ownOrder(userId, id);
    try {
      return this.present(await this.orders.cancel(id, userId, this.clock()));
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const current = (await this.orders.get(id)) ?? order;
      const status = effectiveStatus(current, this.clock());
      if (status === 'cancelled') return this.present(current);
      throw errors.conflict(`Order is ${status} and can no longer be cancelled`);
    }
  }

  // ---- confirmation paths ------------------------------------------------------------------------

  /** POST /api/v1/orders/{id}/pay: the owner completes a mock order; any other provider is 403. */
  async payOwnMockOrder(userId: string, id: string): Promise<OrderView> {
    const order = await this.ownOrder(userId, id);
    await this.requireMockCashier(order);
    return this.present((await this.confirm(order, 'owner')).order);
  }

  /** POST /api/v1/admin/orders/{id}/pay: manual write-off; any other provider is 403. */
  async writeOffManualOrder(id: string): Promise<AdminOrderView> {
    const order = ORDER_ID_PATTERN.test(id) ? await this.orders.get(id) : undefined;
    if (!order) throw errors.notFound('Order not found');
    if (order.provider !== 'manual') {
      throw errors.forbidden(`A ${order.provider} order is not confirmed by an administrator write-off`);
    }
    return this.presentForAdmin((await this.confirm(order, 'admin')).order);
  }

  private async requireMockCashier(order: StoredOrder): Promise<void> {
    if (order.provider !== 'mock') {
      throw errors.forbidden(`A ${order.provider} order cannot be paid by its owner`);
    }
    const { registry } = await this.deps.gateways.current();
    if (!registry.has('mock')) throw errors.forbidden('The mock cashier is disabled');
  }

  /**
   * Moves the order to `paid` through one conditional write from the status it was read in. Losing a race
   * re-reads and decides again: already paid means done (no second event), anything else is retried.
   */
  private async confirm(
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
      const input = this.settlement(path, status, now, tradeNo);
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

  private settlement(
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
      await this.deps.events.orderPaid(detail);
      await this.orders.markEventPublished(order.id, isoWithOffset(this.clock()));
    } catch (error) {
      log.error('order.paid could not be published', { order_id: order.id, error });
    }
  }

  // ---- channel callbacks -------------------------------------------------------------------------

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
    const { registry } = await this.deps.gateways.current();
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

  private async settleFromCallback(
    provider: string,
    verdict: Extract<CallbackVerdict, { kind: 'paid' }>,
  ): Promise<CallbackVerdict> {
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
    await this.confirm(order, 'callback', verdict.tradeNo);
    return verdict;
  }

  // ---- hosted mock cashier -----------------------------------------------------------------------

  private async cashierOrder(
    id: string,
    token: string | undefined,
  ): Promise<{ order: StoredOrder } | { page: PageResult }> {
    const now = this.clock();
    let userId: string;
    try {
      ({ userId } = await this.deps.cashier.verify(id, token, now));
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      return {
        page: { status: 401, html: cashierErrorPage('This payment link is invalid or has expired.') },
      };
    }
    const order = ORDER_ID_PATTERN.test(id) ? await this.orders.get(id) : undefined;
    if (!order || order.user_id !== userId) {
      return { page: { status: 404, html: cashierErrorPage('Order not found.') } };
    }
    try {
      await this.requireMockCashier(order);
    } catch (error) {
      if (error instanceof AppError) {
        return { page: { status: error.status, html: cashierErrorPage(error.message) } };
      }
      throw error;
    }
    return { order };
  }

  /** GET /pay/mock/{id}?token=...: the order, its amount and a Pay button. */
  async openCashier(id: string, token: string | undefined): Promise<PageResult> {
    const found = await this.cashierOrder(id, token);
    if ('page' in found) return found.page;
    const status = effectiveStatus(found.order, this.clock());
    return { status: 200, html: cashierPage(found.order, status, cashierAction(id, token!)) };
  }

  /** POST /pay/mock/{id}?token=...: settles like POST /api/v1/orders/{id}/pay. */
  async payAtCashier(id: string, token: string | undefined): Promise<PageResult> {
    const found = await this.cashierOrder(id, token);
    if ('page' in found) return found.page;
    try {
      const { order } = await this.confirm(found.order, 'owner');
      return {
        status: 200,
        html: cashierPage(order, 'paid', cashierAction(id, token!), 'Payment received.'),
      };
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        const current = (await this.orders.get(id)) ?? found.order;
        return {
          status: error.status,
          html: cashierPage(current, effectiveStatus(current, this.clock()), '', error.message),
        };
      }
      throw error;
    }
  }
}

function cashierAction(id: string, token: string): string {
  return `/pay/mock/${id}?token=${encodeURIComponent(token)}`;
}
