// What the `payment-callback` function needs (lib/wiring/needs.ts). It is the notify address itself, so it
// cannot be told its own URL (a cycle in the stack) and never hands one out.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Settlement writes the order, its grant and its order.paid event (the outbox) in one transaction; the
  // outbox-drain function publishes the event, so this function needs no bus.
  table: 'readwrite',
  // Channel credentials are sealed with it.
  masterKey: true,
  // A channel's refund notice that completes a refund mails the buyer (docs/DESIGN.md 17).
  mail: true,
  // The callback path is also served at the public address (docs/SPEC.md 3.4), through the CDN: there the
  // CDN's proof is required as for every API route. Its function URL (the notify address) needs none.
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
} as const satisfies GroupNeeds;
