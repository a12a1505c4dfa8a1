// What the `render` function needs (lib/wiring/needs.ts): the originals to read and the derived/ prefix to
// write renditions to; no table, no credentials (docs/IMAGES.md).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  bucket: 'read',
  // PutObject under derived/ only: a rendition is stored once and served from then on.
  renditions: true,
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
} as const satisfies GroupNeeds;
