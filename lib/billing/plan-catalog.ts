// The plan catalogue as the API shows it: public and admin listings, and the administrator's edits.
import { planView } from './model.ts';
import type { NewPlan, PlanChanges, PlanRepository } from './plans.ts';

export interface PlanCatalogDeps {
  plans: PlanRepository;
}

export type PlanView = ReturnType<typeof planView>;

export class PlanCatalog {
  constructor(private readonly deps: PlanCatalogDeps) {}

  /** Oldest first, unpaginated: a catalogue is small. */
  async list(activeOnly: boolean): Promise<PlanView[]> {
    return (await this.deps.plans.list({ activeOnly })).map(planView);
  }

  async create(input: NewPlan): Promise<PlanView> {
    return planView(await this.deps.plans.create(input));
  }

  async update(id: string, changes: PlanChanges): Promise<PlanView> {
    return planView(await this.deps.plans.update(id, changes));
  }

  async delete(id: string): Promise<{ id: string; deleted: true }> {
    await this.deps.plans.delete(id);
    return { id, deleted: true };
  }
}
