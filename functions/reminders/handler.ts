// Lambda entry of the `reminders` worker (docs/DESIGN.md 17): a schedule (every hour, infra/workers.ts) runs
// it; it mails the owner of each paid plan ending within `billing.renewal_reminder_days`, once per grant,
// reading the sparse, sharded index of grant end dates (lib/billing/renewals.ts). A reminder that cannot be
// sent stays listed, and the next run tries again; only a run that cannot read the index at all throws.
import type { Context } from 'aws-lambda';
import type { ReminderSummary } from '#lib/billing/renewals.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type RemindersDeps, remindersDeps } from './deps.ts';

export type RemindersHandler = (event: unknown, context: Context) => Promise<ReminderSummary>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createRemindersHandler(deps: () => RemindersDeps): RemindersHandler {
  return observeInvocation('reminders', async () => deps().reminders.run());
}

export const handler = createRemindersHandler(remindersDeps);
