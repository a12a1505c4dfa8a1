// Comparing a secret someone presents with the one expected, in constant time.
import { timingSafeEqual } from 'node:crypto';

/** Whether two secrets are equal, compared in constant time (the timing tells nothing of where they differ). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
