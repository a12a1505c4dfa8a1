// What the `takedowns` worker needs (lib/wiring/needs.ts): once a minute it puts the files administrators
// took down on the edge's deny-list and sends their paths in one CDN invalidation (lib/platform/cdn/takedowns.ts).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Reads the pending takedowns, keeps the deny-list's record, and deletes what it sent.
  table: 'readwrite',
  // CreateInvalidation on the one distribution, and writes to the edge's deny-list (its KeyValueStore):
  // the only function that does either.
  cdn: true,
} as const satisfies GroupNeeds;
