// What the `accounts` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  // TOTP secrets and the token-signing key are sealed with it.
  masterKey: true,
  // Codes and notices go out by mail.
  mail: true,
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
  // The sign-in providers' client secrets (auth.providers[].secret_id): GetSecretValue on those only.
  providerSecrets: true,
} as const satisfies GroupNeeds;
