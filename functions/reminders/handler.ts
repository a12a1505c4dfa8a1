// Lambda entry of the `reminders` worker (docs/DESIGN.md 17): a schedule (every 5 minutes, infra/workers.ts)
// runs it; it mails the owner of each paid plan ending within `billing.renewal_reminder_days`, once per
// grant, reading every shard of the sparse index of grant end dates at once and keeping under
// `billing.reminders_per_second` (lib/billing/renewals.ts). It stops starting reminders before the
// function's timeout; what is left, and a reminder that could not be sent, stay listed for the next run.
// Only a run that cannot read the index at all throws.
import type { Context } from 'aws-lambda';
import type { ReminderSummary } from '#lib/billing/renewals.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type RemindersDeps, remindersDeps } from './deps.ts';

export type RemindersHandler = (event: unknown, context: Context) => Promise<ReminderSummary>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createRemindersHandler(deps: () => RemindersDeps): RemindersHandler {
  return observeInvocation('reminders', async (_event: unknown, context: Context) => {
    const canTell = typeof context?.getRemainingTimeInMillis === 'function';
    return deps().reminders.run(canTell ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {});
  });
}

export const handler = createRemindersHandler(remindersDeps);
