// The reminders worker's dependencies, built once per container from its needs and settings.

import { buildAccountRecords } from '#lib/accounts/build-sessions.ts';
import { buildReminders } from '#lib/billing/build-reminders.ts';
import type { RenewalReminders } from '#lib/billing/renewals.ts';
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
  const listingShards = settings.listing_shards;
  return {
    reminders: buildReminders({
      table,
      mailer: mailerOf(resources),
      ...buildAccountRecords({ table, listingShards }),
      days: settings.billing.renewal_reminder_days,
      perSecond: settings.billing.reminders_per_second,
      listingShards,
    }),
  };
}

let deps: RemindersDeps | undefined;

export function remindersDeps(): RemindersDeps {
  deps ??= buildRemindersDeps(groupResources('reminders', needs, config));
  return deps;
}
