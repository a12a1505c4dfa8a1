// What the `account-lifecycle` worker needs (lib/wiring/needs.ts): every minute it builds the exports owners
// asked for, deletes the accounts whose grace is over, and purges the files expired or past their time in the
// trash (lib/lifecycle/worker.ts).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Reads the two listings, the accounts and what they own; deletes them, anonymizes their orders.
  table: 'readwrite',
  // Reads the originals and writes the ZIP under exports/; deletes a deleted account's objects.
  bucket: 'readwrite',
  // The mailed links' key is sealed with it (lib/lifecycle/build.ts).
  masterKey: true,
  // The export's link.
  mail: true,
} as const satisfies GroupNeeds;
