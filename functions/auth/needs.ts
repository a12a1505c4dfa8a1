// What the `auth` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  // TOTP secrets and the token-signing key are sealed with it.
  masterKey: true,
  // Codes and notices go out by mail.
  mail: true,
  // The per-IP limit of the public account endpoints needs the viewer's address behind the CDN.
  clientAddress: true,
} as const satisfies GroupNeeds;
