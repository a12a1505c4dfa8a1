// The reconciler function's dependencies, built once per container from its needs and settings: the same
// billing services the callback function builds, so a reconciled order settles through the same code.

import { settlingBilling } from '#functions/payment-callback/deps.ts';
import type { Billing } from '#lib/billing/build.ts';
import { type ReconcileWindow, reconcileWindow } from '#lib/billing/reconcile.ts';
import { config } from '#lib/platform/config/index.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { needs } from './needs.ts';

export interface ReconcilerDeps extends Pick<Billing, 'reconciler'> {
  /** payment.reconcile and the order TTL (docs/PAYMENTS-GUIDE.md, "Reconciliation"). */
  window: ReconcileWindow;
}

export function buildReconcilerDeps(resources: GroupResources): ReconcilerDeps {
  return {
    reconciler: settlingBilling(resources).reconciler,
    window: reconcileWindow(resources.settings.payment),
  };
}

let deps: ReconcilerDeps | undefined;

export function reconcilerDeps(): ReconcilerDeps {
  deps ??= buildReconcilerDeps(groupResources('reconciler', needs, config));
  return deps;
}
