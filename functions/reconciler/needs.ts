// What the `reconciler` worker needs (lib/wiring/needs.ts): on a schedule it asks each channel about its
// pending orders and settles those the channel reports paid (docs/DESIGN.md 14).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Pending orders, the settlement transaction (order, grant and outbox event together).
  table: 'readwrite',
  // The channels' credentials are sealed with it.
  masterKey: true,
  // A pending refund the channel reports done mails the buyer (docs/DESIGN.md 17).
  mail: true,
} as const satisfies GroupNeeds;
