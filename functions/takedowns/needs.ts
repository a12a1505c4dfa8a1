// What the `takedowns` worker needs (lib/wiring/needs.ts): once a minute it sends the paths administrators
// took down in one CDN invalidation (lib/platform/cdn/takedowns.ts).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Reads the pending takedowns and deletes those it sent.
  table: 'readwrite',
  // CreateInvalidation on the one distribution: the only function that invalidates.
  cdn: true,
} as const satisfies GroupNeeds;
