// Lambda entry of the `reconciler` worker (docs/DESIGN.md 14): a schedule (every 5 minutes, infra/) runs it;
// it asks each channel about its pending orders whose check is due and settles those the channel's verified
// answer reports paid (lib/billing/reconcile.ts). One channel failing never fails the run: its orders are
// counted `failed` (with a warning and a metric) and asked again next time. Only a run that cannot read the
// settings or the orders at all throws, so Lambda counts the error and the next schedule runs again.
import type { Context } from 'aws-lambda';
import type { ReconcileSummary } from '#lib/billing/reconcile.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type ReconcilerDeps, reconcilerDeps } from './deps.ts';

export type ReconcilerHandler = (event: unknown, context: Context) => Promise<ReconcileSummary>;

/**
 * The reconciler over the given dependencies, as one observed invocation (its log lines carry the
 * invocation's ids; its metrics are written at its end). The scheduled event carries nothing it uses.
 */
export function createReconcilerHandler(deps: () => ReconcilerDeps): ReconcilerHandler {
  return observeInvocation('reconciler', async (_event: unknown, context: Context) => {
    const { reconciler } = deps();
    // Stops starting queries before the function's timeout; what is left waits for the next run.
    const canTell = typeof context?.getRemainingTimeInMillis === 'function';
    return reconciler.run(canTell ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {});
  });
}

export const handler = createReconcilerHandler(reconcilerDeps);
