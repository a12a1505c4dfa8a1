// Which mark an owner's images carry (docs/IMAGES.md "Watermarks"), as the render function learns it: the
// owner's tag in the key names their rules' item (`edgerules#<tag>`, lib/files/owner-rules.ts), which holds
// the plan of their grant (written beside the grant, in its transaction); the plan's item holds its mark.
// Two GetItems, kept per container for MARK_STALENESS_MS per owner and per plan, and only on a render or
// a stored copy's miss at the CDN: a stored copy's answer costs those reads once a half-minute per owner.
import { type Cached, cached } from '#lib/platform/cache.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { ownerTagOfKey } from './names.ts';
import { edgeRulesAt, planInForce } from './owner-rules.ts';
import { type Watermark, type WatermarkSpec, watermarkVersion } from './watermark.ts';

/** How long a container keeps an owner's plan and a plan's mark: a change applies within it. */
export const MARK_STALENESS_MS = 30_000;

/** A mark to draw: its version (in the stored key) and what the render process draws. */
export interface OwnerMark {
  version: string;
  spec: WatermarkSpec;
}

export interface OwnerMarksDeps {
  /** The table, reached on the first look-up. */
  table: () => Promise<Table>;
  /** The plan item's key (lib/billing/plans.ts). */
  planKey: (id: string) => { pk: string; sk: string };
  /** Where an image mark's bytes are read. */
  storage: FileStorage;
  clock: Clock;
}

export class OwnerMarks {
  private readonly plans = new Map<string, Cached<string | undefined>>();
  private readonly marks = new Map<string, Cached<OwnerMark | undefined>>();

  constructor(private readonly deps: OwnerMarksDeps) {}

  /** The mark on the images of the owner of `key`, or undefined (no tag, no plan, or a plan without one). */
  async of(key: string): Promise<OwnerMark | undefined> {
    const tag = ownerTagOfKey(`/${key}`);
    if (tag === undefined) return undefined;
    const plan = await this.keep(this.plans, tag, async () =>
      planInForce(await edgeRulesAt(await this.deps.table(), tag), this.deps.clock().getTime()),
    ).get();
    return plan === undefined ? undefined : this.keep(this.marks, plan, () => this.markOf(plan)).get();
  }

  private keep<T>(map: Map<string, Cached<T>>, id: string, load: () => Promise<T>): Cached<T> {
    let entry = map.get(id);
    if (!entry) {
      entry = cached(load, { ttlMs: MARK_STALENESS_MS, clock: this.deps.clock });
      map.set(id, entry);
    }
    return entry;
  }

  private async markOf(planId: string): Promise<OwnerMark | undefined> {
    const item = await (await this.deps.table()).get(this.deps.planKey(planId), { consistent: false });
    const mark = item?.watermark as Watermark | undefined;
    if (!mark) return undefined;
    const { image, ...rest } = mark;
    const version = watermarkVersion(mark);
    if (image === undefined) return { version, spec: rest };
    const stored = await this.deps.storage.open(image);
    if (!stored) return undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of stored.body as AsyncIterable<Buffer>) chunks.push(chunk);
    return { version, spec: { ...rest, image: Buffer.concat(chunks) } };
  }
}
