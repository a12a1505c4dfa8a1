// The cold path of each function: its bundle's cold import plus the first request's one-time waits (the
// master key's KMS Decrypt of the sealed keys where the group needs the master key, the origin secret from
// Secrets Manager where it sits behind the front door), against the SDK-only yardstick importing the same
// clients and making the same one-time calls. Those waits have no local stand-in to time, so each is
// charged at ONE_TIME_WAIT_MS on both sides: the ratio stays the imports' ratio, diluted by what the waits
// cost in AWS (docs/PERFORMANCE.md "Cold start").
import { GROUP_NEEDS } from '#functions/needs.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import type { GroupImport } from './cold-import.ts';
import { round } from './stats.ts';

/** One in-region KMS or Secrets Manager call from a fresh Lambda container, connection set-up included. */
export const ONE_TIME_WAIT_MS = 25;

export interface ColdPath {
  group: FunctionGroup;
  one_time_waits: number;
  cold_path_ms: number;
  baseline_cold_path_ms: number;
  ratio: number;
}

export function oneTimeWaits(group: FunctionGroup): number {
  const needs = GROUP_NEEDS[group];
  return (needs.masterKey ? 1 : 0) + (needs.frontDoor ? 1 : 0);
}

export function coldPaths(groups: GroupImport[]): { groups: ColdPath[]; cold_path_ratio_max: number } {
  const paths = groups.map((entry) => {
    const waits = oneTimeWaits(entry.group) * ONE_TIME_WAIT_MS;
    const ours = entry.import_p50_ms + waits;
    const theirs = entry.baseline_p50_ms + waits;
    return {
      group: entry.group,
      one_time_waits: oneTimeWaits(entry.group),
      cold_path_ms: round(ours, 1),
      baseline_cold_path_ms: round(theirs, 1),
      ratio: round(ours / theirs, 2),
    };
  });
  return { groups: paths, cold_path_ratio_max: Math.max(...paths.map((entry) => entry.ratio)) };
}
