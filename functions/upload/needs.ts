// What the `upload` function needs (lib/wiring/needs.ts); the stack and the local runner derive from this.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  bucket: 'readwrite',
} as const satisfies GroupNeeds;
