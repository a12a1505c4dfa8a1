// Lambda entry of the `reconciler` worker (docs/DESIGN.md 14): a schedule (every 5 minutes, infra/) runs it,
// fanned out: the rule invokes it RECONCILE_FAN_OUT times at once, each with its own range of the schedule's
// shards (`{"shards": {"from": 0, "to": 4}}`; a run without one reads them all). It asks each channel about
// its pending orders whose check is due and settles those the channel's verified answer reports paid
// (lib/billing/reconcile.ts). One channel failing never fails the run: its orders are counted `failed` (with
// a warning and a metric) and asked again next time. Only a run that cannot read the settings or the orders
// at all throws, so Lambda counts the error and the next schedule runs again.
import type { Context } from 'aws-lambda';
import type { ReconcileSummary } from '#lib/billing/reconcile.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type ReconcilerDeps, reconcilerDeps } from './deps.ts';
import type { ShardRange } from './fan-out.ts';

export type ReconcilerHandler = (event: unknown, context: Context) => Promise<ReconcileSummary>;

/** The event's shard range when it names a valid one of `count` shards; otherwise every shard. */
function rangeOf(event: unknown, count: number): ShardRange | undefined {
  const range = (event as { shards?: Partial<ShardRange> } | null)?.shards;
  const { from, to } = range ?? {};
  const valid = Number.isInteger(from) && Number.isInteger(to) && 0 <= from! && from! < to! && to! <= count;
  return valid ? { from: from!, to: to! } : undefined;
}

/**
 * The reconciler over the given dependencies, as one observed invocation (its log lines carry the
 * invocation's ids; its metrics are written at its end).
 */
export function createReconcilerHandler(deps: () => ReconcilerDeps): ReconcilerHandler {
  return observeInvocation('reconciler', async (event: unknown, context: Context) => {
    const { reconciler, shards } = deps();
    const range = rangeOf(event, shards);
    // Stops starting queries before the function's timeout; what is left waits for the next run.
    const canTell = typeof context?.getRemainingTimeInMillis === 'function';
    return reconciler.run({
      ...(canTell ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {}),
      ...(range ? { shards: range } : {}),
    });
  });
}

export const handler = createReconcilerHandler(reconcilerDeps);
