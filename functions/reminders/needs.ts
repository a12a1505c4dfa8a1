// What the `reminders` worker needs (lib/wiring/needs.ts): every hour it mails the owners of paid plans that
// end within `billing.renewal_reminder_days`, once per grant (lib/billing/renewals.ts).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Reads the index of grant end dates and the owners' addresses; writes the once-per-grant markers and
  // takes reminded entries out of the index.
  table: 'readwrite',
  // The reminder itself.
  mail: true,
} as const satisfies GroupNeeds;
