// The payments function's dependencies, built once per container from its needs and settings.

import type { AuditLog } from '#lib/accounts/audit-log.ts';
import { buildRequestLimits } from '#lib/accounts/build-request-limits.ts';
import { type Billing, buildBilling } from '#lib/billing/build.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import type { Authenticator } from '#lib/http/handler.ts';
import { config } from '#lib/platform/config/index.ts';
import { adminSecondFactorRequired, isProduction } from '#lib/platform/config/schema.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { auditLogOf, quotaOf, sessionsOf } from '#lib/wiring/shared.ts';
import { siteOf } from '#lib/wiring/site.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

/** The billing services its routes call, and the session check. */
export interface PaymentsDeps extends Pick<Billing, 'plans' | 'orders' | 'settings' | 'cashier'> {
  authenticate: Authenticator;
  /** Where administrators' actions are recorded (lib/http/admin-audit.ts). */
  audit: AuditLog;
  /** Every billing service this container built (settlement, gateways...), for tests that reach past the routes. */
  billing: Billing;
}

export function buildPaymentsDeps(resources: GroupResources): PaymentsDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const masterKey = masterKeyOf(resources);
  const listingShards = settings.listing_shards;
  const shared = sessionsOf(resources);
  const billing = buildBilling({
    table,
    masterKey,
    accounts: shared,
    // Settlement writes the storage grant a plan buys.
    quota: quotaOf(resources),
    production: isProduction(settings),
    baseUrl: settings.base_url,
    payment: settings.payment,
    listingShards,
    // A key or gateway URL change needs the administrator's password, and is told to every administrator.
    settingsChanges: { mailer: mailerOf(resources), passwords: buildRequestLimits({ table }).requestLimits },
    // The buyer is told of a refund.
    refundMailer: mailerOf(resources),
    siteName: async () => (await siteOf(resources).current()).site.name,
  });
  return {
    plans: billing.plans,
    orders: billing.orders,
    settings: billing.settings,
    cashier: billing.cashier,
    authenticate: createAuthenticator({
      sessions: shared.sessions,
      requireAdminSecondFactor: adminSecondFactorRequired(settings),
    }),
    audit: auditLogOf(resources),
    billing,
  };
}

let deps: PaymentsDeps | undefined;

export function paymentsDeps(): PaymentsDeps {
  deps ??= buildPaymentsDeps(groupResources('payments', needs, config));
  return deps;
}
