// What the `ban-mirror` worker needs (lib/wiring/needs.ts): once a minute it writes the bans in force into
// the WAF's two IP sets, so the CDN refuses banned viewers before any function runs (docs/DEPLOYMENT.md "WAF").
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  // Reads the `BANS` partition, as every API group does.
  bans: true,
  // GetIPSet and UpdateIPSet on the two sets of the stack's web ACL: the only function that writes them.
  wafIpSets: true,
} as const satisfies GroupNeeds;
