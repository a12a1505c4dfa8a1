// The plan catalogue as the API shows it: public and admin listings, and the administrator's edits. The
// active plans are kept per container for CATALOGUE_STALENESS_MS (the catalogue page and order creation are
// the hot reads); an order is sold at the terms this copy holds (lib/billing/order-desk.ts), so a change
// made in another container applies here within that staleness. The administrator's listing is read from
// the table.
import type { OwnerRulesDesk } from '#lib/files/owner-rules.ts';
import { watermarkVersion } from '#lib/files/watermark.ts';
import { type Cached, cached } from '#lib/platform/cache.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import { planView } from './model.ts';
import type { NewPlan, PlanChanges, PlanRepository } from './plans.ts';

/** How stale the public catalogue may be in a container that did not make the change. */
export const CATALOGUE_STALENESS_MS = 30_000;

export interface PlanCatalogDeps {
  plans: PlanRepository;
  clock: Clock;
  /** Where a plan's watermark version goes for the edge (lib/files/owner-rules.ts). */
  marks: Pick<OwnerRulesDesk, 'setPlanMark'>;
}

export type PlanView = ReturnType<typeof planView>;

export class PlanCatalog {
  private readonly active: Cached<PlanView[]>;

  constructor(private readonly deps: PlanCatalogDeps) {
    this.active = cached(async () => (await deps.plans.list({ activeOnly: true })).map(planView), {
      ttlMs: CATALOGUE_STALENESS_MS,
      clock: deps.clock,
    });
  }

  /** Oldest first, unpaginated: a catalogue is small. The active plans may be CATALOGUE_STALENESS_MS old. */
  async list(activeOnly: boolean): Promise<PlanView[]> {
    if (activeOnly) return this.active.get();
    return (await this.deps.plans.list({ activeOnly })).map(planView);
  }

  /**
   * The active plan `id` as this container holds it (up to CATALOGUE_STALENESS_MS old), or undefined when
   * it holds none by that id (then the table is asked: the plan may be newer than the copy).
   */
  async held(id: string): Promise<PlanView | undefined> {
    return (await this.active.get()).find((plan) => plan.id === id);
  }

  /** The table showed this container's copy behind (it lacked a plan on sale). */
  outdated(): void {
    this.active.invalidate();
  }

  async create(input: NewPlan): Promise<PlanView> {
    const plan = planView(await this.deps.plans.create(input));
    return plan.watermark ? this.marked(plan) : this.changed(plan);
  }

  async update(id: string, changes: PlanChanges): Promise<PlanView> {
    const plan = planView(await this.deps.plans.update(id, changes));
    return changes.watermark === undefined ? this.changed(plan) : this.marked(plan);
  }

  async delete(id: string): Promise<{ id: string; deleted: true }> {
    await this.deps.plans.delete(id);
    await this.deps.marks.setPlanMark(id, undefined);
    return this.changed({ id, deleted: true as const });
  }

  /** A plan whose watermark was set: its version is written for the edge (docs/IMAGES.md "Watermarks"). */
  private async marked(plan: PlanView): Promise<PlanView> {
    await this.deps.marks.setPlanMark(plan.id, plan.watermark ? watermarkVersion(plan.watermark) : undefined);
    return this.changed(plan);
  }

  /** The administrator's change is in this container's catalogue at once. */
  private changed<T>(result: T): T {
    this.active.invalidate();
    return result;
  }
}
