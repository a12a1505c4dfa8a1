// What the `payment-callback` function needs (lib/wiring/needs.ts). It is the notify address itself, so it
// cannot be told its own URL (a cycle in the stack) and never hands one out.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  // Channel credentials are sealed with it.
  masterKey: true,
  // A settled order publishes order.paid.
  events: true,
} as const satisfies GroupNeeds;
