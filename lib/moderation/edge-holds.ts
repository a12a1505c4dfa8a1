// Held files at the edge (docs/MODERATION.md "Serving"): the /i/* viewer-request function answers 451 for
// a file held for review, its renditions included, before the cache (infra/edge.ts). As with an owner's
// rules (lib/files/owner-rules.ts), the table holds the truth, which the local server reads as its edge; a
// change marks the item pending in the `edgeholds#<n>` listing, and the takedowns worker, each minute,
// copies what is pending into the edge's KeyValueStore under `h:<object key>` (present: held). So no
// request looks anything up but the store, and a hold or its release reaches every edge within two minutes.
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import { type ShardedListing, shardPages, shardPartition } from '#lib/platform/db/shards.ts';
import type { Item, Table, TransactItem } from '#lib/platform/db/table.ts';

const KEY_PREFIX = 'edgehold#';
const holdKey = (objectKey: string) => ({ pk: `${KEY_PREFIX}${objectKey}`, sk: 'hold' });

/** The partition name of holds changed since the edge last had them, in the `listing` index. */
export const PENDING_HOLDS_LISTING_NAME = 'edgeholds';

/** The KeyValueStore key of a held file (the edge's code builds the same from the request's key). */
export const HELD_ENTRY_PREFIX = 'h:';
export const heldEntry = (objectKey: string): string => `${HELD_ENTRY_PREFIX}${objectKey}`;

/** Whether the local server, playing the edge, refuses this key as held (the table's record, at once). */
export async function heldAtEdge(table: Table, objectKey: string): Promise<boolean> {
  return (await table.get(holdKey(objectKey), { consistent: false }))?.held === true;
}

export interface EdgeHoldsDeps {
  table: Table;
  /** `listing_shards`: writers and the worker must agree. */
  shards: number;
}

/** Holds copied to the edge per page of a shard. */
const PAGE = 50;

export class EdgeHolds {
  private readonly pending: ShardedListing;

  constructor(private readonly deps: EdgeHoldsDeps) {
    this.pending = { index: 'listing', name: PENDING_HOLDS_LISTING_NAME, count: deps.shards };
  }

  /** The write that holds the key at the edge (or releases it), marked pending for the worker. */
  change(objectKey: string, held: boolean): TransactItem {
    return {
      Put: {
        Item: {
          ...holdKey(objectKey),
          held,
          gsi2pk: shardPartition(this.pending, objectKey),
          // Unique per change, so the worker clears the mark only if nothing changed since it read it.
          gsi2sk: `${this.deps.table.clock().toISOString()}#${crypto.randomUUID()}`,
        },
      },
    };
  }

  /**
   * The worker's part: every pending change written to the edge (each shard its own loop, all at once);
   * a hold's mark is then cleared and a release's item deleted, unless it changed meanwhile (the next run
   * writes it again). Answers how many.
   */
  async sync(edge: EdgeDenyList): Promise<number> {
    const { table } = this.deps;
    let count = 0;
    const readShard = async (shard: number) => {
      for await (const page of shardPages(table, this.pending, shard, { pageSize: PAGE })) {
        const items = (await table.getMany(page.map((marked) => holdKey(objectKeyOf(marked))))).filter(
          (item): item is Item => item?.gsi2sk !== undefined,
        );
        const held = items.filter((item) => item.held === true);
        const released = items.filter((item) => item.held !== true);
        await edge.write(
          held.map((item) => [heldEntry(objectKeyOf(item)), '1']),
          released.map((item) => heldEntry(objectKeyOf(item))),
        );
        await Promise.all(items.map((item) => this.settle(item)));
        count += items.length;
      }
    };
    await Promise.all(Array.from({ length: this.deps.shards }, (_, shard) => readShard(shard)));
    return count;
  }

  private async settle(item: Item): Promise<void> {
    const key = holdKey(objectKeyOf(item));
    const unchanged = {
      ConditionExpression: 'gsi2sk = :seen',
      ExpressionAttributeValues: { ':seen': item.gsi2sk },
    };
    const write =
      item.held === true
        ? this.deps.table.update(key, { UpdateExpression: 'REMOVE gsi2pk, gsi2sk', ...unchanged })
        : this.deps.table.delete(key, unchanged);
    await write.catch((error: unknown) => {
      // Changed since it was read: still pending, written again next run.
      if ((error as { name?: string }).name !== 'ConditionFailedError') throw error;
    });
  }
}

const objectKeyOf = (item: Item): string => String(item.pk).slice(KEY_PREFIX.length);
