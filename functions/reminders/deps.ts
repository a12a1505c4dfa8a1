// The reminders worker's dependencies, built once per container from its needs and settings.

import { AccountRepository } from '#lib/accounts/repository.ts';
import { RenewalReminders } from '#lib/billing/renewals.ts';
import { config } from '#lib/platform/config/index.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface RemindersDeps {
  reminders: RenewalReminders;
}

export function buildRemindersDeps(resources: GroupResources): RemindersDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  return {
    reminders: new RenewalReminders({
      table,
      accounts: new AccountRepository(table, settings.listing_shards),
      mailer: mailerOf(resources),
      days: settings.billing.renewal_reminder_days,
      listingShards: settings.listing_shards,
      clock: resources.clock ?? table.clock,
    }),
  };
}

let deps: RemindersDeps | undefined;

export function remindersDeps(): RemindersDeps {
  deps ??= buildRemindersDeps(groupResources('reminders', needs, config));
  return deps;
}
