// The payment-callback function's dependencies, built once per container from its needs and settings.
import { TokenSigner } from '#lib/accounts/tokens.ts';
import { buildPaymentService } from '#lib/billing/build.ts';
import type { PaymentService } from '#lib/billing/service.ts';
import { buildQuota } from '#lib/files/quota-service.ts';
import { config } from '#lib/platform/config/index.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface PaymentCallbackDeps {
  payments: PaymentService;
}

/**
 * The payment service of a function that settles channel payments it did not take (callbacks here, the
 * reconciler's queries): table and master key only.
 */
export function settlingPaymentService(resources: GroupResources): PaymentService {
  const { settings } = resources;
  const table = tableOf(resources);
  const masterKey = masterKeyOf(resources);
  return buildPaymentService({
    table,
    masterKey,
    // It never signs a cashier link, but the service is one; the signer opens its key only if used.
    signer: new TokenSigner(table, masterKey),
    // Settlement writes the storage grant a plan buys.
    quota: buildQuota({ table, defaultQuotaBytes: settings.upload.default_quota_bytes }),
    settings,
    ...(resources.clock ? { clock: resources.clock } : {}),
  });
}

export function buildPaymentCallbackDeps(resources: GroupResources): PaymentCallbackDeps {
  return { payments: settlingPaymentService(resources) };
}

let deps: PaymentCallbackDeps | undefined;

export function paymentCallbackDeps(): PaymentCallbackDeps {
  deps ??= buildPaymentCallbackDeps(groupResources('payment-callback', needs, config));
  return deps;
}
