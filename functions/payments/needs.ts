// What the `payments` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Settlement writes the order, its grant and its order.paid event (the outbox) in one transaction; the
  // outbox-drain function publishes the event, so this function needs no bus.
  table: 'readwrite',
  // Payment credentials and the token-signing key (sessions, cashier links) are sealed with it.
  masterKey: true,
  // Orders tell channels where to notify; settings show the notify URLs.
  notifyUrl: true,
  // A payment gateway address change is told to every administrator by mail.
  mail: true,
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
} as const satisfies GroupNeeds;
