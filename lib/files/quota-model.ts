// What a plan grants and how much an account may store (docs/DESIGN.md 11): pure rules over the stored grant
// and the clock, no I/O. An expired grant simply stops counting here, at read time; no job rewrites it.
import type { Role } from '#lib/accounts/model.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The storage grant an account holds: written by settlement, kept on the usage item and the order. */
export interface Grant {
  /** The paid order that last wrote this grant (also how concurrent writers detect each other). */
  order_id: string;
  plan_id: string;
  plan_name: string;
  quota_bytes: number;
  /** When the current run of this plan began (kept when a purchase extends it). */
  started_at: string;
  /** Epoch milliseconds at which the grant stops counting; absent: permanent. */
  ends_ms?: number;
  /** The plan's default retention of new uploads, in days (docs/UPLOADS.md "Expiring uploads"); absent: none. */
  retention_days?: number;
}

/** What a paid order buys: copied from the plan when the order was placed. */
export interface GrantTerms {
  order_id: string;
  plan_id: string;
  plan_name: string;
  /** null: the plan grants no storage (settlement writes no grant). */
  quota_bytes: number | null;
  /** 0: permanent. */
  duration_days: number;
  /** null or absent: the plan sets no default retention. */
  retention_days?: number | null;
}

export interface QuotaDefaults {
  /** `upload.default_quota_bytes`: the quota of an account without an active grant. */
  defaultQuotaBytes: number;
}

/** The usage and grant of one account as stored (an account never written yet reads as zero). */
export interface UsageState {
  accountId: string;
  usedBytes: number;
  fileCount: number;
  grant?: Grant;
}

/** GET /api/v1/usage. */
export interface UsageView {
  used_bytes: number;
  file_count: number;
  /** null: no quota (administrators). */
  quota_bytes: number | null;
  plan: { id: string; name: string; expires_at: string | null } | null;
}

export function isGrantActive(grant: Grant | undefined, now: Date): grant is Grant {
  return grant !== undefined && (grant.ends_ms === undefined || grant.ends_ms > now.getTime());
}

/** The default retention (days) of an upload with no expiry of its own: the active grant's; never an administrator's. */
export function retentionDaysOf(grant: Grant | undefined, now: Date, role: Role): number | undefined {
  return role !== 'admin' && isGrantActive(grant, now) ? grant.retention_days : undefined;
}

/**
 * The quota in force: none (null) for administrators; the active grant's; else the default. A grant past
 * its end counts as absent from that instant on.
 */
export function effectiveQuota(
  grant: Grant | undefined,
  now: Date,
  defaults: QuotaDefaults,
  role: Role,
): number | null {
  if (role === 'admin') return null;
  return isGrantActive(grant, now) ? grant.quota_bytes : defaults.defaultQuotaBytes;
}

/**
 * The grant after a purchase: the plan already active is extended from its current end (a permanent one
 * stays permanent; a permanent purchase makes it permanent); any other plan, or an expired grant, is
 * replaced from `now`. Undefined when the plan grants no storage (the current grant is left alone).
 */
export function nextGrant(current: Grant | undefined, terms: GrantTerms, now: Date): Grant | undefined {
  if (terms.quota_bytes === null) return undefined;
  const extending = isGrantActive(current, now) && current.plan_id === terms.plan_id;
  const durationMs = terms.duration_days * DAY_MS;
  let endsMs: number | undefined;
  if (terms.duration_days > 0) {
    if (!extending) endsMs = now.getTime() + durationMs;
    else if (current.ends_ms !== undefined) endsMs = current.ends_ms + durationMs;
  }
  return {
    order_id: terms.order_id,
    plan_id: terms.plan_id,
    plan_name: terms.plan_name,
    quota_bytes: terms.quota_bytes,
    started_at: extending ? current.started_at : isoWithOffset(now),
    ...(endsMs !== undefined ? { ends_ms: endsMs } : {}),
    ...(terms.retention_days ? { retention_days: terms.retention_days } : {}),
  };
}

export function grantEndsAt(grant: Grant): string | null {
  return grant.ends_ms === undefined ? null : isoWithOffset(new Date(grant.ends_ms));
}

export function usageView(state: UsageState, now: Date, defaults: QuotaDefaults, role: Role): UsageView {
  const active = isGrantActive(state.grant, now) ? state.grant : undefined;
  return {
    used_bytes: state.usedBytes,
    file_count: state.fileCount,
    quota_bytes: effectiveQuota(state.grant, now, defaults, role),
    plan: active ? { id: active.plan_id, name: active.plan_name, expires_at: grantEndsAt(active) } : null,
  };
}

/**
 * The grant after a full refund of a paid order that bought `terms` (docs/DESIGN.md 17): the days the
 * order added come off the grant of its plan (gone when that leaves nothing), a permanent purchase takes the
 * whole grant back. `unchanged`: nothing of the order is left in the grant (another plan replaced it since,
 * it already ended, or the order added days to a grant made permanent by another order).
 */
export function grantAfterRefund(
  current: Grant | undefined,
  terms: Pick<GrantTerms, 'plan_id' | 'quota_bytes' | 'duration_days'>,
  now: Date,
): { kind: 'unchanged' } | { kind: 'removed' } | { kind: 'shortened'; grant: Grant } {
  if (terms.quota_bytes === null || !isGrantActive(current, now) || current.plan_id !== terms.plan_id) {
    return { kind: 'unchanged' };
  }
  if (terms.duration_days === 0) return { kind: 'removed' };
  if (current.ends_ms === undefined) return { kind: 'unchanged' };
  const endsMs = current.ends_ms - terms.duration_days * DAY_MS;
  if (endsMs <= now.getTime()) return { kind: 'removed' };
  return { kind: 'shortened', grant: { ...current, ends_ms: endsMs } };
}
