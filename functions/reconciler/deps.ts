// The reconciler function's dependencies, built once per container from its needs and settings: the same
// billing services the callback function builds, so a reconciled order settles through the same code.

import { settlingBilling } from '#functions/payment-callback/deps.ts';
import type { Billing } from '#lib/billing/build.ts';
import { config } from '#lib/platform/config/index.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { needs } from './needs.ts';

/**
 * The reconciler, its schedule and bounds from payment.reconcile (docs/PAYMENTS-GUIDE.md, "Reconciliation"),
 * and how many shards the schedule spreads over (`listing_shards`: a fanned-out run names a range of them).
 */
export type ReconcilerDeps = Pick<Billing, 'reconciler'> & { shards: number };

export function buildReconcilerDeps(resources: GroupResources): ReconcilerDeps {
  return { reconciler: settlingBilling(resources).reconciler, shards: resources.settings.listing_shards };
}

let deps: ReconcilerDeps | undefined;

export function reconcilerDeps(): ReconcilerDeps {
  deps ??= buildReconcilerDeps(groupResources('reconciler', needs, config));
  return deps;
}
