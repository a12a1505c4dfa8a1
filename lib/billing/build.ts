// The billing domain's one builder: shared pieces (repositories, settings store, live gateways, cashier
// links, settlement) made once, and the named services handlers call. Production (functions/*/deps.ts)
// and tests call the same builder; what it reads of accounts it is given (Pick<Accounts, ...>).
import type { Accounts } from '#lib/accounts/build.ts';
import { type RateLimit, Throttle } from '#lib/accounts/throttle.ts';
import { buildOwnerRules } from '#lib/files/build-owner-rules.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
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
import { RefundCompletion } from './refund-completion.ts';
import { RefundDesk } from './refunds.ts';
import { GatewaySource } from './registry.ts';
import { settingsFromConfig } from './settings.ts';
import { PaymentSettingsStore } from './settings-store.ts';
import { Settlement } from './settlement.ts';

export interface BillingInput {
  table: Table;
  /** Seals the channels' credentials in the stored settings. */
  masterKey: () => Promise<MasterKey>;
  /**
   * The signer of the mock cashier's links, the buyers' and administrators' records (a refund's notice, an
   * order's username, a settings change's notices) and security events (build-sessions.ts builds them).
   */
  accounts: Pick<Accounts, 'signer' | 'repository' | 'securityEvents'>;
  /** Settlement writes the storage grant a plan buys (lib/files buildQuota). */
  quota: QuotaService;
  /** A production deployment (lib/platform/config/schema.ts isProduction): no mock cashier, https gateways. */
  production: boolean;
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
  /** The buyer's notice of a refund (docs/DESIGN.md 17), completed by a request, a notice or reconciliation. */
  refundMailer: Mailer;
  /** The site's name on the mock cashier's pages (docs/DEPLOYMENT.md "Branding"); the group serving them has it. */
  siteName?: () => Promise<string>;
}

export function buildBilling(input: BillingInput) {
  const { table, production, baseUrl, payment, listingShards, quota } = input;
  const { clock } = table;
  const accounts = input.accounts.repository;
  const planRepository = new PlanRepository({ table });
  const orders = new OrderRepository({ table, listingShards });
  // Config-file credentials seed the table on first start only (docs/SPEC.md 2.4 rules 2-3).
  const seed = () => settingsFromConfig(payment);
  const store = new PaymentSettingsStore({ table, masterKey: input.masterKey, seed });
  const gateways = new GatewaySource({ store, production, clock });
  const schedule = new ReconcileSchedule(payment.reconcile);
  const links = new CashierLinks({ signer: input.accounts.signer, baseUrl });
  const notifyBaseUrl = (payment.notify_base_url ?? baseUrl).replace(/\/+$/, '');
  // One catalogue: the plans page and order creation share this container's copy of the active plans.
  const marks = buildOwnerRules({ table, shards: listingShards });
  const catalog = new PlanCatalog({ plans: planRepository, clock, marks });
  const coupons = new CouponDesk({
    coupons: new CouponRepository({ table, listingShards }),
    clock,
    throttle: new Throttle({ table }),
    checks: {
      perAccount: rateOf(payment.coupon_checks.per_account),
      perAddress: rateOf(payment.coupon_checks.per_address),
    },
  });
  const settlement = new Settlement({ orders, plans: planRepository, quota, clock });
  const completion = new RefundCompletion({
    table,
    orders,
    quota,
    accounts,
    mailer: input.refundMailer,
    listingShards,
    clock,
    gateways,
    schedule,
  });
  const refunds = new RefundDesk({
    table,
    orders,
    listingShards,
    clock,
    gateways,
    notifyBaseUrl,
    schedule,
    completion,
  });
  return {
    plans: catalog,
    orders: new OrderDesk({
      orders,
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
    callbacks: new CallbackReceiver({ orders, gateways, settlement, refunds: completion }),
    /** The hosted mock cashier's pages. */
    cashier: new MockCashier({
      orders,
      gateways,
      cashier: links,
      settlement,
      clock,
      siteName: input.siteName ?? (async () => 'Image host'),
    }),
    /** The administrator's payment settings and the registered providers. */
    settings: new GatewaySettings({
      store,
      gateways,
      production,
      notifyBaseUrl,
      security: input.settingsChanges
        ? new PaymentSecurity({
            table,
            accounts,
            events: input.accounts.securityEvents,
            ...input.settingsChanges,
          })
        : undefined,
    }),
    gateways,
    /** Coupons and refunds (docs/DESIGN.md 17). */
    coupons,
    refunds,
    reconciler: new Reconciler({
      orders,
      gateways,
      settlement,
      schedule,
      maxOrdersPerRun: payment.reconcile.max_orders_per_run,
      channelConcurrency: payment.reconcile.channel_concurrency,
      clock,
      coupons,
      refunds: completion,
    }),
  };
}

export type Billing = ReturnType<typeof buildBilling>;

/** A rate setting (`per_minute`, `burst`, `per_day`) as the throttle takes it. */
function rateOf(setting: AppConfig['payment']['coupon_checks']['per_account']): RateLimit {
  return { perMinute: setting.per_minute, burst: setting.burst, perDay: setting.per_day };
}
