// What the `render` function needs (lib/wiring/needs.ts): the originals to read, the derived/ prefix to
// write renditions to and its renditions' claims in the table; no other item, no keys (docs/IMAGES.md).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  bucket: 'read',
  // PutObject under derived/ only: a rendition is stored once and served from then on.
  renditions: true,
  // One render at a time per rendition across instances, and refusals remembered: `RENDITION#` items only.
  renditionClaims: true,
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
} as const satisfies GroupNeeds;
