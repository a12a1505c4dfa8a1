// The billing domain's one builder: shared pieces (repositories, settings store, live gateways, cashier
// links, settlement) made once, and the named services handlers call. Production (functions/*/deps.ts)
// and tests call the same builder.
import { AccountRepository } from '#lib/accounts/repository.ts';
import { SecurityEvents } from '#lib/accounts/security-events.ts';
import type { TokenSigner } from '#lib/accounts/tokens.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { CallbackReceiver } from './callbacks.ts';
import { CashierLinks } from './cashier.ts';
import { CouponDesk } from './coupon-desk.ts';
import { CouponRepository } from './coupons.ts';
import { GatewaySettings } from './gateway-settings.ts';
import { MockCashier } from './mock-cashier.ts';
import { OrderDesk } from './order-desk.ts';
import { OrderRepository } from './orders.ts';
import { PaymentSecurity, type PaymentSecurityDeps } from './payment-security.ts';
import { PlanCatalog } from './plan-catalog.ts';
import { PlanRepository } from './plans.ts';
import { Reconciler } from './reconcile.ts';
import { ReconcileSchedule } from './reconcile-schedule.ts';
import { RefundDesk } from './refunds.ts';
import { GatewaySource } from './registry.ts';
import { settingsFromConfig } from './settings.ts';
import { PaymentSettingsStore } from './settings-store.ts';
import { Settlement } from './settlement.ts';

export interface BillingInput {
  table: Table;
  /** Seals the channels' credentials in the stored settings. */
  masterKey: () => Promise<MasterKey>;
  /** Signs the mock cashier's links. */
  signer: TokenSigner;
  /** Settlement writes the storage grant a plan buys (lib/files buildQuota). */
  quota: QuotaService;
  /** No mock cashier in `prod`/`production`. */
  stage: string;
  /** The service's public address: cashier links, channel_c's return page, the default notify base. */
  baseUrl: string;
  /**
   * The config file's payment section: seeds the stored settings on first start; order TTL, notify base,
   * the reconciler's schedule.
   */
  payment: AppConfig['payment'];
  /** `listing_shards`: the all-orders listing, the pending outbox and the reconciler's schedule spread over them. */
  listingShards: number;
  /**
   * What a change to a key or a gateway URL needs: the actor's password checked (the account domain's
   * RequestLimits, which hashes with argon2) and a notice mailed to every administrator. Only the group
   * whose routes change the settings has them; without them, such a change is refused.
   */
  settingsChanges?: { mailer: Mailer; passwords: PaymentSecurityDeps['passwords'] };
  /** The buyer's notice of a refund (docs/DESIGN.md 17); only the group whose routes refund has it. */
  refundMailer?: Mailer;
  clock?: Clock;
}

export interface Billing {
  plans: PlanCatalog;
  orders: OrderDesk;
  settlement: Settlement;
  callbacks: CallbackReceiver;
  /** The hosted mock cashier's pages. */
  cashier: MockCashier;
  /** The administrator's payment settings and the registered providers. */
  settings: GatewaySettings;
  gateways: GatewaySource;
  reconciler: Reconciler;
  /** Coupons (docs/DESIGN.md 17). */
  coupons: CouponDesk;
  /** Refunds (docs/DESIGN.md 17). */
  refunds: RefundDesk;
}

export function buildBilling(input: BillingInput): Billing {
  const { table, stage, baseUrl, payment } = input;
  const clock = input.clock ?? table.clock;
  const planRepository = new PlanRepository(table);
  const orderRepository = new OrderRepository(table, { listingShards: input.listingShards });
  // Config-file credentials seed the table on first start only (docs/SPEC.md 2.4 rules 2-3).
  const store = new PaymentSettingsStore(table, input.masterKey, () => settingsFromConfig(payment));
  const gateways = new GatewaySource(store, stage, { clock });
  const schedule = new ReconcileSchedule(payment.reconcile);
  const links = new CashierLinks(input.signer, baseUrl);
  const notifyBaseUrl = (payment.notify_base_url ?? baseUrl).replace(/\/+$/, '');
  // One catalogue: the plans page and order creation share this container's copy of the active plans.
  const catalog = new PlanCatalog({ plans: planRepository, clock });
  const coupons = new CouponDesk({ coupons: new CouponRepository(table, input.listingShards), clock });
  const settlement = new Settlement({
    orders: orderRepository,
    plans: planRepository,
    quota: input.quota,
    clock,
  });
  const accounts = new AccountRepository(table, input.listingShards);
  const refunds = new RefundDesk({
    table,
    orders: orderRepository,
    quota: input.quota,
    accounts,
    mailer: input.refundMailer,
    listingShards: input.listingShards,
    clock,
    gateways,
    notifyBaseUrl,
    schedule,
  });
  return {
    plans: catalog,
    orders: new OrderDesk({
      orders: orderRepository,
      plans: planRepository,
      catalog,
      gateways,
      cashier: links,
      settlement,
      clock,
      orderTtlMinutes: payment.order_ttl_minutes,
      schedule,
      returnUrl: `${baseUrl}/`,
      notifyBaseUrl,
      coupons,
      accounts,
    }),
    settlement,
    callbacks: new CallbackReceiver({ orders: orderRepository, gateways, settlement, refunds }),
    cashier: new MockCashier({ orders: orderRepository, gateways, cashier: links, settlement, clock }),
    settings: new GatewaySettings({
      store,
      gateways,
      stage,
      notifyBaseUrl,
      security: input.settingsChanges
        ? new PaymentSecurity({
            table,
            accounts,
            events: new SecurityEvents(table),
            ...input.settingsChanges,
          })
        : undefined,
    }),
    gateways,
    coupons,
    refunds,
    reconciler: new Reconciler({
      orders: orderRepository,
      gateways,
      settlement,
      schedule,
      maxOrdersPerRun: payment.reconcile.max_orders_per_run,
      clock,
      coupons,
      refunds,
    }),
  };
}
