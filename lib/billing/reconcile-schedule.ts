// When a pending channel order is asked about at its channel (docs/PAYMENTS-GUIDE.md, "Reconciliation"):
// its first check, the back-off between checks, and when it leaves the schedule. Pure: the order desk
// places the first check, the reconciler the next ones, the migration the first of an older order.
import type { AppConfig } from '#lib/platform/config/schema.ts';

const MINUTE_MS = 60_000;

export type ReconcileSettings = AppConfig['payment']['reconcile'];

export class ReconcileSchedule {
  constructor(private readonly settings: Omit<ReconcileSettings, 'local_interval_seconds'>) {}

  /** The first check: `min_age_minutes` after the order was placed (its callback usually comes first). */
  firstCheck(placedAt: Date): Date {
    return new Date(placedAt.getTime() + this.settings.min_age_minutes * MINUTE_MS);
  }

  /**
   * After `checks` checks, the last one at `now`, of an order with this deadline: when to ask next, or
   * undefined when it leaves the schedule (checks spent, or this was the check at deadline + margin). The
   * wait doubles from `min_age_minutes` up to `max_interval_minutes`; the last check lands at deadline +
   * margin, so a payment made just before the channel closed the order is still found.
   */
  nextCheck(now: Date, checks: number, deadlineMs: number): Date | undefined {
    const { min_age_minutes, max_interval_minutes, max_checks } = this.settings;
    const end = this.endOf(deadlineMs);
    if (checks >= max_checks || now.getTime() >= end) return undefined;
    const waitMinutes = Math.min(min_age_minutes * 2 ** Math.min(checks, 30), max_interval_minutes);
    return new Date(Math.min(now.getTime() + waitMinutes * MINUTE_MS, end));
  }

  /** `max_checks`: how many times one order (or refund) is asked about. */
  get maxChecks(): number {
    return this.settings.max_checks;
  }

  /** Past this (deadline + margin) an order is asked about no more. */
  endOf(deadlineMs: number): number {
    return deadlineMs + this.settings.margin_minutes * MINUTE_MS;
  }
}
