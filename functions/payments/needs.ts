// What the `payments` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  // Payment credentials and the token-signing key (sessions, cashier links) are sealed with it.
  masterKey: true,
  // A settled order publishes order.paid.
  events: true,
  // channel_c's mapi.php is told the payer's address, which behind the CDN only the CDN can name.
  clientAddress: true,
  // Orders tell channels where to notify; settings show the notify URLs.
  notifyUrl: true,
} as const satisfies GroupNeeds;
