// The admin-managed plan catalogue: the only source of an order's price (docs/DESIGN.md 7).
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { Watermark } from '#lib/files/watermark.ts';
import { planKey } from '#lib/platform/db/keys.ts';
import type { Item, Table } from '#lib/platform/db/table.ts';
import { conditionFailedAs, setFields } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { Plan } from './model.ts';

export { planKey };

/**
 * Plan ids are UUIDs; anything else (an over-long path segment would even exceed DynamoDB's key size and
 * fail as a 500) names no plan, without asking the table.
 */
const PLAN_ID_PATTERN = /^[0-9A-Za-z-]{1,64}$/;
const PLAN_INDEX = 'plans';
const planNotFound = () => errors.notFound('Plan not found');

export interface NewPlan {
  name: string;
  description?: string;
  amount_cents: number;
  active?: boolean;
  /** Absent or null: the plan grants no storage. */
  quota_bytes?: number | null;
  /** Bytes served a month (docs/UPLOADS.md "Bandwidth"); absent or null: unlimited. */
  bandwidth_bytes?: number | null;
  /** Absent or 0: permanent. */
  duration_days?: number;
  watermark?: Watermark | null;
  /** Days an upload keeps without an expiry of its own (docs/UPLOADS.md "Expiring uploads"); absent or null: none. */
  retention_days?: number | null;
}

export type PlanChanges = Partial<
  Pick<
    Plan,
    | 'name'
    | 'description'
    | 'amount_cents'
    | 'active'
    | 'quota_bytes'
    | 'bandwidth_bytes'
    | 'duration_days'
    | 'watermark'
    | 'retention_days'
  >
>;

/** What an order copies from its plan: the terms it is sold at. */
export type SaleTerms = Pick<
  Plan,
  'id' | 'name' | 'amount_cents' | 'quota_bytes' | 'duration_days' | 'retention_days'
>;

/** The largest quota a plan may grant: 1 PiB (beyond it a number is a typo, not a product). */
export const MAX_PLAN_QUOTA_BYTES = 2 ** 50;
/** The longest a plan may last: 100 years (0 is permanent). */
export const MAX_PLAN_DURATION_DAYS = 36_500;
/** The longest default retention a plan may set: 10 years (lib/files/expiry.ts EXPIRY_MAX_SECONDS). */
export const MAX_PLAN_RETENTION_DAYS = 3650;

function fromItem(item: Item | undefined): Plan | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi2pk: _g, gsi2sk: _s, ...plan } = item;
  // Plans stored before quotas existed grant no storage and are permanent.
  return {
    ...(plan as unknown as Plan),
    quota_bytes: typeof plan.quota_bytes === 'number' ? plan.quota_bytes : null,
    bandwidth_bytes: typeof plan.bandwidth_bytes === 'number' ? plan.bandwidth_bytes : null,
    duration_days: typeof plan.duration_days === 'number' ? plan.duration_days : 0,
    watermark: (plan.watermark as Watermark | undefined) ?? null,
    retention_days: typeof plan.retention_days === 'number' ? plan.retention_days : null,
  };
}

export interface PlanRepositoryDeps {
  table: Table;
}

export class PlanRepository {
  constructor(private readonly deps: PlanRepositoryDeps) {}

  async create(input: NewPlan): Promise<Plan> {
    const clock = this.deps.table.clock();
    const now = isoWithOffset(clock);
    const plan: Plan = {
      id: randomUUID(),
      name: input.name,
      description: input.description ?? '',
      amount_cents: input.amount_cents,
      active: input.active ?? true,
      quota_bytes: input.quota_bytes ?? null,
      bandwidth_bytes: input.bandwidth_bytes ?? null,
      duration_days: input.duration_days ?? 0,
      watermark: input.watermark ?? null,
      retention_days: input.retention_days ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.deps.table.putNew({
      ...planKey(plan.id),
      ...plan,
      gsi2pk: PLAN_INDEX,
      gsi2sk: `${clock.toISOString()}#${plan.id}`,
    });
    return plan;
  }

  async get(id: string): Promise<Plan | undefined> {
    if (!PLAN_ID_PATTERN.test(id)) return undefined;
    return fromItem(await this.deps.table.get(planKey(id)));
  }

  /** Every plan, oldest first (the catalogue is small: one page of up to 1 MB of plans). */
  async list(options: { activeOnly: boolean }): Promise<Plan[]> {
    const plans: Plan[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.table.query({
        IndexName: 'listing',
        KeyConditionExpression: 'gsi2pk = :plans',
        ExpressionAttributeValues: { ':plans': PLAN_INDEX },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      // The index projects the fields plans had before `bandwidth_bytes` (an index's projection cannot
      // change in place): each page's plans are read whole, in one batch.
      for (let start = 0; start < page.items.length; start += 100) {
        const keys = page.items.slice(start, start + 100).map((item) => planKey(String(item.id)));
        for (const item of await this.deps.table.getMany(keys)) {
          const plan = fromItem(item);
          if (plan && (!options.activeOnly || plan.active)) plans.push(plan);
        }
      }
      startKey = page.lastKey;
    } while (startKey);
    return plans;
  }

  async update(id: string, changes: PlanChanges): Promise<Plan> {
    if (!PLAN_ID_PATTERN.test(id)) throw planNotFound();
    const updated = this.deps.table.update(
      planKey(id),
      setFields(changes, isoWithOffset(this.deps.table.clock())),
    );
    return fromItem(await updated.catch(conditionFailedAs(planNotFound)))!;
  }

  /** Orders copy the plan's name and price, so deleting a plan never changes an existing order. */
  async delete(id: string): Promise<void> {
    if (!PLAN_ID_PATTERN.test(id)) throw planNotFound();
    await this.deps.table
      .delete(planKey(id), { ConditionExpression: 'attribute_exists(pk)' })
      .catch(conditionFailedAs(planNotFound));
  }
}
