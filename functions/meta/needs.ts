// What the `meta` function needs (lib/wiring/needs.ts): nothing but the front door; no table, no bucket,
// no credentials.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
} as const satisfies GroupNeeds;
