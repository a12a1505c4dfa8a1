// What the `shares` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Share links, their views and password guesses, and the files and albums they show.
  table: 'readwrite',
  // The owner's routes (create, list, revoke) check session tokens, whose signing key is sealed with it, as
  // is the key of the share-scoped image links.
  masterKey: true,
  // A share's images come through its own door (/s/<id>/i/<grant>): the originals read, and their thumbnails
  // rendered and stored under derived/ as the render function does (lib/files/renditions.ts).
  bucket: 'read',
  renditions: true,
  // API Gateway reaches it: only requests carrying the CDN's origin secret are served, and the viewer's
  // address the CDN names is believed only with it (lib/http/front-door.ts).
  frontDoor: true,
  // A banned viewer is refused before any route runs (docs/ABUSE.md "Bans"): the `BANS` partition, read.
  bans: true,
} as const satisfies GroupNeeds;
