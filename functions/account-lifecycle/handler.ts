// Lambda entry of the `account-lifecycle` worker (docs/ACCOUNTS.md "Export", "Deleting an account"): a
// schedule (every minute, infra/workers.ts) runs it; it builds the exports owners asked for, one at a time,
// each streamed to S3 and mailed, then deletes the accounts whose 7-day grace is over, then purges the files
// expired or past their time in the trash (docs/UPLOADS.md "Expiring uploads", "Trash"). What it cannot finish
// before the function's timeout stays listed for the next run; a run that stopped halfway is resumed.
import type { Context } from 'aws-lambda';
import type { LifecycleSummary } from '#lib/lifecycle/worker.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type LifecycleDeps, lifecycleDeps } from './deps.ts';

export type LifecycleHandler = (event: unknown, context: Context) => Promise<LifecycleSummary>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createLifecycleHandler(deps: () => LifecycleDeps): LifecycleHandler {
  return observeInvocation('account-lifecycle', async (_event: unknown, context: Context) => {
    const canTell = typeof context?.getRemainingTimeInMillis === 'function';
    return deps().worker.run(canTell ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {});
  });
}

export const handler = createLifecycleHandler(lifecycleDeps);
