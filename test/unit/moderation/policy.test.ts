// The moderation policy (docs/MODERATION.md "Policy"): a plan's own thresholds over the deployment's, "at or
// above" each, null never, 0 everything; a file the classifier cannot read is flagged, or held under hold-all.
import { describe, expect, it } from 'vitest';
import { decide, type PolicySettings, thresholdsFor, undecided } from '#lib/moderation/policy.ts';

const settings: PolicySettings = {
  hold_above: 0.85,
  flag_above: 0.5,
  plans: { strict: { hold_above: 0.3 }, lenient: { hold_above: null, flag_above: 0.9 } },
};

describe('the moderation policy', () => {
  it("takes a plan's own thresholds over the deployment's, one by one", () => {
    expect(thresholdsFor(settings, undefined)).toEqual({ hold_above: 0.85, flag_above: 0.5 });
    expect(thresholdsFor(settings, 'unknown-plan')).toEqual({ hold_above: 0.85, flag_above: 0.5 });
    expect(thresholdsFor(settings, 'strict')).toEqual({ hold_above: 0.3, flag_above: 0.5 });
    expect(thresholdsFor(settings, 'lenient')).toEqual({ hold_above: null, flag_above: 0.9 });
  });

  it('holds at or above hold_above, else flags at or above flag_above, else publishes', () => {
    const deployment = thresholdsFor(settings, undefined);
    expect(decide(0.85, deployment)).toBe('held');
    expect(decide(0.8499, deployment)).toBe('flagged');
    expect(decide(0.5, deployment)).toBe('flagged');
    expect(decide(0.4999, deployment)).toBe('published');
    // A plan that holds nothing still flags; one whose thresholds are null publishes everything.
    expect(decide(1, thresholdsFor(settings, 'lenient'))).toBe('flagged');
    expect(decide(1, { hold_above: null, flag_above: null })).toBe('published');
    // Hold-all: every score, 0 included.
    expect(decide(0, { hold_above: 0, flag_above: null })).toBe('held');
  });

  it('never publishes a file it could not classify: flagged, or held where everything is held', () => {
    expect(undecided({ hold_above: 0.85, flag_above: 0.5 })).toBe('flagged');
    expect(undecided({ hold_above: null, flag_above: null })).toBe('flagged');
    expect(undecided({ hold_above: 0, flag_above: null })).toBe('held');
  });
});
