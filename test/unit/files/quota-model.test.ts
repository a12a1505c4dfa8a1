// The pure quota rules (lib/files/quota-model.ts): which quota is in force, and what a purchase does to a grant.
import { describe, expect, it } from 'vitest';
import { expiryOrDefault } from '#lib/files/expiry.ts';
import {
  DAY_MS,
  effectiveQuota,
  type Grant,
  nextGrant,
  retentionDaysOf,
  usageView,
} from '#lib/files/quota-model.ts';

const now = new Date('2026-11-21T08:00:00Z');
const defaults = { defaultQuotaBytes: 1000 };
const grant = (overrides: Partial<Grant> = {}): Grant => ({
  order_id: 'O1',
  plan_id: 'P',
  plan_name: 'Pro',
  quota_bytes: 5000,
  started_at: '2026-11-01T08:00:00+00:00',
  ends_ms: now.getTime() + DAY_MS,
  ...overrides,
});
const terms = (overrides: Partial<Parameters<typeof nextGrant>[1]> = {}) => ({
  order_id: 'O2',
  plan_id: 'P',
  plan_name: 'Pro',
  quota_bytes: 5000 as number | null,
  duration_days: 30,
  ...overrides,
});

describe('effectiveQuota', () => {
  it('is the active grant’s quota, else the default; none for administrators', () => {
    expect(effectiveQuota(grant(), now, defaults, 'user')).toBe(5000);
    expect(effectiveQuota(undefined, now, defaults, 'user')).toBe(1000);
    expect(effectiveQuota(grant(), now, defaults, 'admin')).toBeNull();
    expect(effectiveQuota(undefined, now, defaults, 'admin')).toBeNull();
  });

  it('stops counting a grant at the instant it ends; a permanent grant never ends', () => {
    const ends = grant({ ends_ms: now.getTime() });
    expect(effectiveQuota(ends, new Date(now.getTime() - 1), defaults, 'user')).toBe(5000);
    expect(effectiveQuota(ends, now, defaults, 'user')).toBe(1000);
    const { ends_ms: _ends, ...permanent } = grant();
    expect(effectiveQuota(permanent, new Date('2100-01-01T00:00:00Z'), defaults, 'user')).toBe(5000);
  });

  it('lets a grant be smaller than the default (0 included)', () => {
    expect(effectiveQuota(grant({ quota_bytes: 0 }), now, defaults, 'user')).toBe(0);
  });
});

describe('nextGrant', () => {
  it('starts a first grant now, for its duration', () => {
    expect(nextGrant(undefined, terms(), now)).toEqual({
      order_id: 'O2',
      plan_id: 'P',
      plan_name: 'Pro',
      quota_bytes: 5000,
      started_at: '2026-11-21T08:00:00+00:00',
      ends_ms: now.getTime() + 30 * DAY_MS,
    });
  });

  it('extends the active grant of the same plan from its current end, keeping its start', () => {
    const next = nextGrant(grant(), terms({ quota_bytes: 7000 }), now);
    expect(next).toMatchObject({
      order_id: 'O2',
      quota_bytes: 7000,
      started_at: '2026-11-01T08:00:00+00:00',
      ends_ms: now.getTime() + DAY_MS + 30 * DAY_MS,
    });
  });

  it('keeps a permanent grant permanent, and a permanent purchase makes the grant permanent', () => {
    const { ends_ms: _ends, ...permanent } = grant();
    expect(nextGrant(permanent, terms(), now)?.ends_ms).toBeUndefined();
    expect(nextGrant(grant(), terms({ duration_days: 0 }), now)?.ends_ms).toBeUndefined();
  });

  it('replaces another plan’s grant, or an ended grant of the same plan, from now', () => {
    const other = nextGrant(grant(), terms({ plan_id: 'Q', plan_name: 'Other', duration_days: 7 }), now);
    expect(other).toMatchObject({ plan_id: 'Q', started_at: '2026-11-21T08:00:00+00:00' });
    expect(other?.ends_ms).toBe(now.getTime() + 7 * DAY_MS);
    const ended = nextGrant(grant({ ends_ms: now.getTime() - 1 }), terms(), now);
    expect(ended?.ends_ms).toBe(now.getTime() + 30 * DAY_MS);
    expect(ended?.started_at).toBe('2026-11-21T08:00:00+00:00');
  });

  it('writes nothing for a plan without storage', () => {
    expect(nextGrant(grant(), terms({ quota_bytes: null }), now)).toBeUndefined();
  });
});

describe('a plan’s default retention', () => {
  it('is copied from the order’s terms into the grant, and absent when the plan sets none', () => {
    expect(nextGrant(undefined, terms({ retention_days: 7 }), now)?.retention_days).toBe(7);
    expect(nextGrant(grant({ retention_days: 7 }), terms({ retention_days: null }), now)).not.toHaveProperty(
      'retention_days',
    );
  });

  it('is the active grant’s, none once it ended and never an administrator’s', () => {
    const held = grant({ retention_days: 7 });
    expect(retentionDaysOf(held, now, 'user')).toBe(7);
    expect(retentionDaysOf(held, new Date(now.getTime() + DAY_MS), 'user')).toBeUndefined();
    expect(retentionDaysOf(held, now, 'admin')).toBeUndefined();
  });

  it('sets the end of an upload that asked for none; an asked end always wins', () => {
    const at = now.getTime() / 1000;
    expect(expiryOrDefault(undefined, now, 7)).toBe(at + 7 * 86_400);
    expect(expiryOrDefault(at + 60, now, 7)).toBe(at + 60);
    expect(expiryOrDefault(at + 30 * 86_400, now, 7)).toBe(at + 30 * 86_400);
    expect(expiryOrDefault(undefined, now, undefined)).toBeUndefined();
  });
});

describe('usageView', () => {
  it('shows the plan in force with its end, or null once it ended', () => {
    const state = { accountId: 'A', usedBytes: 10, fileCount: 1, grant: grant() };
    expect(usageView(state, now, defaults, 'user')).toEqual({
      used_bytes: 10,
      file_count: 1,
      quota_bytes: 5000,
      plan: { id: 'P', name: 'Pro', expires_at: '2026-11-22T08:00:00+00:00' },
    });
    expect(usageView(state, new Date(now.getTime() + 2 * DAY_MS), defaults, 'user')).toMatchObject({
      quota_bytes: 1000,
      plan: null,
    });
  });
});
