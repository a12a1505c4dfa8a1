// The payment service the handlers call: one object over plans, gateway settings, orders, channel
// callbacks and the mock cashier, each of which lives in its own module and shares one Settlement.

import type { CallbackReply, CallbackRequest } from '#lib/billing/channels/types.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import { CallbackReceiver } from './callbacks.ts';
import type { CashierLinks } from './cashier.ts';
import { GatewaySettings } from './gateway-settings.ts';
import { MockCashier, type PageResult } from './mock-cashier.ts';
import { type AdminOrderView, type OrderView, planView, type StoredOrder } from './model.ts';
import { OrderService } from './order-service.ts';
import { OrderRepository, type Page } from './orders.ts';
import { type NewPlan, type PlanChanges, PlanRepository } from './plans.ts';
import { Reconciler, type ReconcileSummary, type ReconcileWindow, type RunOptions } from './reconcile.ts';
import type { GatewaySource } from './registry.ts';
import type { PaymentSettingsStore, SettingsPatch } from './settings.ts';
import { Settlement } from './settlement.ts';

export type { PageResult } from './mock-cashier.ts';

export interface PaymentServiceDeps {
  table: Table;
  store: PaymentSettingsStore;
  gateways: GatewaySource;
  cashier: CashierLinks;
  /** Settlement writes the storage grant a plan buys (lib/files). */
  quota: QuotaService;
  stage: string;
  orderTtlMinutes: number;
  /** `payment.notify_base_url ?? base_url`, without a trailing slash. */
  notifyBaseUrl: string;
  /** Where channel_c's cashier sends the payer back. */
  returnUrl: string;
  clock?: () => Date;
}

export class PaymentService {
  readonly plans: PlanRepository;
  readonly orders: OrderRepository;
  private readonly gatewaySettings: GatewaySettings;
  private readonly orderService: OrderService;
  private readonly callbacks: CallbackReceiver;
  private readonly mockCashier: MockCashier;
  private readonly reconciler: Reconciler;

  constructor(deps: PaymentServiceDeps) {
    const clock: Clock = deps.clock ?? deps.table.clock;
    const { gateways, cashier } = deps;
    const plans = new PlanRepository(deps.table);
    const orders = new OrderRepository(deps.table);
    const settlement = new Settlement({ orders, plans, quota: deps.quota, clock });
    this.plans = plans;
    this.orders = orders;
    this.gatewaySettings = new GatewaySettings(deps);
    this.orderService = new OrderService({
      orders,
      plans,
      gateways,
      cashier,
      settlement,
      clock,
      orderTtlMinutes: deps.orderTtlMinutes,
      returnUrl: deps.returnUrl,
      notifyUrl: (provider) => this.gatewaySettings.notifyUrl(provider),
    });
    this.callbacks = new CallbackReceiver(orders, gateways, settlement);
    this.mockCashier = new MockCashier({ orders, gateways, cashier, settlement, clock });
    this.reconciler = new Reconciler({ orders, gateways, settlement, clock });
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

  // ---- gateways and settings (gateway-settings.ts) -----------------------------------------------

  listGateways(): Promise<string[]> {
    return this.gatewaySettings.listGateways();
  }

  notifyUrl(provider: string): string {
    return this.gatewaySettings.notifyUrl(provider);
  }

  readSettings() {
    return this.gatewaySettings.readSettings();
  }

  updateSettings(patch: SettingsPatch) {
    return this.gatewaySettings.updateSettings(patch);
  }

  // ---- orders and their owner/admin confirmation (order-service.ts) ------------------------------

  createOrder(
    userId: string,
    input: { plan_id: string; provider?: string | undefined },
    clientIp: string,
  ): Promise<OrderView> {
    return this.orderService.createOrder(userId, input, clientIp);
  }

  present(order: StoredOrder): Promise<OrderView> {
    return this.orderService.present(order);
  }

  getOwnOrder(userId: string, id: string): Promise<OrderView> {
    return this.orderService.getOwnOrder(userId, id);
  }

  listOwnOrders(userId: string, limit: number, cursor?: string): Promise<Page<OrderView>> {
    return this.orderService.listOwnOrders(userId, limit, cursor);
  }

  listAllOrders(limit: number, cursor?: string): Promise<Page<AdminOrderView>> {
    return this.orderService.listAllOrders(limit, cursor);
  }

  cancelOwnOrder(userId: string, id: string): Promise<OrderView> {
    return this.orderService.cancelOwnOrder(userId, id);
  }

  payOwnMockOrder(userId: string, id: string): Promise<OrderView> {
    return this.orderService.payOwnMockOrder(userId, id);
  }

  writeOffManualOrder(id: string): Promise<AdminOrderView> {
    return this.orderService.writeOffManualOrder(id);
  }

  // ---- channel callbacks (callbacks.ts) ----------------------------------------------------------

  handleCallback(provider: string, request: CallbackRequest): Promise<CallbackReply> {
    return this.callbacks.handleCallback(provider, request);
  }

  // ---- reconciliation (reconcile.ts): the reconciler worker's one call ----------------------------

  reconcile(window: ReconcileWindow, options?: RunOptions): Promise<ReconcileSummary> {
    return this.reconciler.run(window, options);
  }

  // ---- hosted mock cashier (mock-cashier.ts) -----------------------------------------------------

  openCashier(id: string, token: string | undefined): Promise<PageResult> {
    return this.mockCashier.openCashier(id, token);
  }

  payAtCashier(id: string, token: string | undefined): Promise<PageResult> {
    return this.mockCashier.payAtCashier(id, token);
  }
}
