// What the `outbox-drain` worker needs (lib/wiring/needs.ts): it reads order.paid events the settlement
// transaction wrote to the table (through the table's stream) and delivers them to the bus; and it delivers
// the webhooks (docs/WEBHOOKS.md) of the new files, deletions and paid orders the stream brings.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Marks each delivered event, so a replayed stream record is not delivered twice.
  table: 'readwrite',
  events: true,
  // Opens the webhook endpoints' signing secrets (sealed by it).
  masterKey: true,
} as const satisfies GroupNeeds;
