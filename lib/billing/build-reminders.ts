// Builds the renewal reminders (renewals.ts) for the reminders worker: the table, the mail channel and the
// account records (owners' addresses) alone, so the worker bundles nothing else of billing.
import type { Accounts } from '#lib/accounts/build.ts';
import { RenewalReminders, type RenewalRemindersDeps } from './renewals.ts';

export type RemindersInput = Omit<RenewalRemindersDeps, 'accounts' | 'clock'> & Pick<Accounts, 'repository'>;

export function buildReminders({ repository, ...input }: RemindersInput): RenewalReminders {
  return new RenewalReminders({ ...input, accounts: repository, clock: input.table.clock });
}
