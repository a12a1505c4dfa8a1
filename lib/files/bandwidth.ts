// Bandwidth per owner (docs/UPLOADS.md "Bandwidth"): bytes served this month, counted per owner tag
// (lib/files/names.ts) by the bandwidth worker from the CDN's logs into one item per tag and month
// (`bandwidth#<tag>` / `<yyyy-mm>`, lib/files/bandwidth-meter.ts), and the monthly cap in force: the active
// plan's `bandwidth_bytes`, else `bandwidth.default_bytes`; null is unlimited (and always for administrators).
import type { Role } from '#lib/accounts/model.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import { ownerTagOf } from './names.ts';
import { isGrantActive } from './quota-model.ts';
import type { QuotaService } from './quota-service.ts';

export const bandwidthKey = (tag: string, month: string) => ({ pk: `bandwidth#${tag}`, sk: month });

/** `yyyy-mm` of an instant (UTC). */
export const monthOf = (now: Date): string => now.toISOString().slice(0, 7);

export interface BandwidthView {
  /** Bytes served this month (UTC) as counted so far: the CDN's logs arrive minutes to an hour late. */
  bandwidth_bytes_used: number;
  /** The monthly cap; null: unlimited. */
  bandwidth_bytes: number | null;
}

export interface BandwidthUsageDeps {
  table: Table;
  clock: Clock;
  quota: Pick<QuotaService, 'stateFor'>;
  /** A plan's monthly cap by its id (the plan catalogue, lib/billing/plans.ts: billing builds on files). */
  plans: { get(id: string): Promise<{ bandwidth_bytes?: number | null } | undefined> };
  /** `bandwidth.default_bytes`: the cap without a plan granting one; undefined: unlimited. */
  defaultBytes: number | undefined;
}

export class BandwidthUsage {
  constructor(private readonly deps: BandwidthUsageDeps) {}

  /** Bytes of the owner's files served in `month` (default: this month). */
  async used(ownerId: string, month = monthOf(this.deps.clock())): Promise<number> {
    const item = await this.deps.table.get(bandwidthKey(ownerTagOf(ownerId), month), { consistent: false });
    return typeof item?.bytes === 'number' ? item.bytes : 0;
  }

  /** Bytes served this month of each owner (the back office's page of accounts), 100 per round trip. */
  async usedMany(ownerIds: readonly string[]): Promise<Map<string, number>> {
    const month = monthOf(this.deps.clock());
    const served = new Map<string, number>();
    for (let start = 0; start < ownerIds.length; start += 100) {
      const ids = ownerIds.slice(start, start + 100);
      const items = await this.deps.table.getMany(ids.map((id) => bandwidthKey(ownerTagOf(id), month)));
      for (const [index, id] of ids.entries()) served.set(id, Number(items[index]?.bytes ?? 0));
    }
    return served;
  }

  /** The cap in force now: the active plan's, else the default; administrators have none. */
  async capOf(account: { id: string; role: Role }): Promise<number | null> {
    if (account.role === 'admin') return null;
    const { state } = await this.deps.quota.stateFor(account);
    if (isGrantActive(state.grant, this.deps.clock())) {
      const plan = await this.deps.plans.get(state.grant.plan_id);
      if (plan) return plan.bandwidth_bytes ?? null;
    }
    return this.deps.defaultBytes ?? null;
  }

  async viewOf(account: { id: string; role: Role }): Promise<BandwidthView> {
    const [used, cap] = await Promise.all([this.used(account.id), this.capOf(account)]);
    return { bandwidth_bytes_used: used, bandwidth_bytes: cap };
  }
}
