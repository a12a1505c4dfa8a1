// The moderation policy (docs/MODERATION.md "Policy"): one score 0..1 from the classifier, two thresholds
// per deployment and per plan, three states. A file starts with none (not classified yet); the worker sets
// one; an administrator's review sets `published` (approved) for good, or removes the file (taken down).

import type { ModerationState } from '#lib/files/moderation-state.ts';

export type { Moderation, ModerationState } from '#lib/files/moderation-state.ts';

/** Thresholds as configured: null never holds (or flags); 0 holds (or flags) everything. */
export interface Thresholds {
  hold_above: number | null;
  flag_above: number | null;
}

export interface PolicySettings extends Thresholds {
  /** A plan's own thresholds by plan id; a threshold it leaves out is the deployment's. */
  plans: Record<string, { hold_above?: number | null | undefined; flag_above?: number | null | undefined }>;
}

/** The thresholds that apply to an owner holding `planId` (none: the deployment's). */
export function thresholdsFor(settings: PolicySettings, planId: string | undefined): Thresholds {
  const plan = planId === undefined ? undefined : settings.plans[planId];
  return {
    hold_above: plan?.hold_above === undefined ? settings.hold_above : plan.hold_above,
    flag_above: plan?.flag_above === undefined ? settings.flag_above : plan.flag_above,
  };
}

/** The state of a score: held at or above hold_above, else flagged at or above flag_above, else published. */
export function decide(score: number, thresholds: Thresholds): ModerationState {
  if (thresholds.hold_above !== null && score >= thresholds.hold_above) return 'held';
  if (thresholds.flag_above !== null && score >= thresholds.flag_above) return 'flagged';
  return 'published';
}

/**
 * A file the classifier could not read (a failure, or a type it cannot decode): never published unseen.
 * Held where everything is held until reviewed (hold_above 0), else flagged for a person to look at.
 */
export function undecided(thresholds: Thresholds): ModerationState {
  return thresholds.hold_above === 0 ? 'held' : 'flagged';
}
