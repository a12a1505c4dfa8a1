// What the `bandwidth` worker needs (lib/wiring/needs.ts): every 5 minutes it counts the CDN's new log
// objects per owner, mails the 80 % and 100 % notices and stops or resumes serving (lib/files/bandwidth-meter.ts).
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // The monthly counters, log claims, notice marks, owners' rules, plans, grants and owners' addresses.
  table: 'readwrite',
  // The notices.
  mail: true,
  // Lists and reads the CDN's log objects.
  accessLogs: true,
} as const satisfies GroupNeeds;
