// What the `files` function needs (lib/wiring/needs.ts): stored files only; no table, no credentials.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  bucket: 'read',
} as const satisfies GroupNeeds;
