// The payment-callback function's dependencies, built once per container from its needs and settings.
import { type Billing, buildBilling } from '#lib/billing/build.ts';
import { config } from '#lib/platform/config/index.ts';
import { isProduction } from '#lib/platform/config/schema.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { quotaOf, sessionsOf } from '#lib/wiring/shared.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export type PaymentCallbackDeps = Pick<Billing, 'callbacks'>;

/**
 * The billing services of a function that settles channel payments it did not take (callbacks here, the
 * reconciler's queries): table and master key only.
 */
export function settlingBilling(resources: GroupResources): Billing {
  const { settings } = resources;
  const table = tableOf(resources);
  const masterKey = masterKeyOf(resources);
  const listingShards = settings.listing_shards;
  return buildBilling({
    table,
    masterKey,
    // It never signs a cashier link, but the builder makes every service; the signer opens its key only if used.
    accounts: sessionsOf(resources),
    // Settlement writes the storage grant a plan buys.
    quota: quotaOf(resources),
    production: isProduction(settings),
    baseUrl: settings.base_url,
    payment: settings.payment,
    listingShards,
    // A refund a channel completes later (its notice, or reconciliation) is told to the buyer.
    refundMailer: mailerOf(resources),
  });
}

export function buildPaymentCallbackDeps(resources: GroupResources): PaymentCallbackDeps {
  return { callbacks: settlingBilling(resources).callbacks };
}

let deps: PaymentCallbackDeps | undefined;

export function paymentCallbackDeps(): PaymentCallbackDeps {
  deps ??= buildPaymentCallbackDeps(groupResources('payment-callback', needs, config));
  return deps;
}
