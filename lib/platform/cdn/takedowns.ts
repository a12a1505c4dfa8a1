// Paths to take out of the CDN soon, sent in batches (docs/UPLOADS.md "Deleting"): a takedown records its
// path here (`/i/<key>*`: the file and every rendition of it), and the takedowns worker (functions/takedowns)
// sends the paths pending in ONE invalidation a minute. An ordinary delete records nothing: the edge drops
// its copy within `cdn.deleted_max_age_seconds` (the /i/* cache policy's maximum), and an invalidation per
// delete would cost $5 per 1,000 paths past the free 1,000 a month and fail outright past 3,000 paths (15
// wildcard paths) in flight.
//
// Pending items are spread over the `listing` index's shards (lib/platform/db/shards.ts), so no partition
// takes every takedown, and expire with the edge's own maximum age: past it the edge holds nothing to take
// out, so an item the worker never sent (CloudFront down for a day) lingers no longer than that.
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import { epochSeconds, type Table } from '#lib/platform/db/table.ts';
import type { Invalidator } from './invalidator.ts';

/** The partition name of pending takedowns in the `listing` index (`takedown#<n>`). */
export const TAKEDOWN_LISTING_NAME = 'takedown';

/**
 * Paths per invalidation: CloudFront takes up to 3,000 per request and 3,000 in flight at once, so one
 * batch a minute of at most this leaves room for the previous minute's while it completes. The rest waits
 * for the next minute.
 */
export const MAX_TAKEDOWN_PATHS = 1000;

/**
 * Wildcard paths per invalidation: CloudFront allows only 15 in flight at once, so a run sends at most
 * this many of them (a takedown's `/i/<key>*`; the rest wait for the next minute).
 */
export const MAX_TAKEDOWN_WILDCARD_PATHS = 15;

/** CloudFront's answer while the wildcard (or path) allowance in flight is used up by earlier batches. */
const TOO_MANY_IN_FLIGHT = 'TooManyInvalidationsInProgress';

/** A path CloudFront reads as a wildcard: `*` may only end it, and then it covers every query string too. */
export const isWildcardPath = (path: string): boolean => path.endsWith('*');

const KEY_PREFIX = 'takedown#';
/** Deletes of sent items in flight at once. */
const PARALLEL_DELETES = 25;

export interface TakedownItem {
  pk: string;
  sk: 'takedown';
  gsi2pk: string;
  /** `<ISO time recorded>#<path>`: unique, oldest first. */
  gsi2sk: string;
  expires_at: number;
  [attribute: string]: unknown;
}

export interface TakedownsDeps {
  table: Table;
  /** `listing_shards`: writers and the worker must agree. */
  shards: number;
  /** `cdn.deleted_max_age_seconds`: how long the edge may still hold a path, and so the item's TTL. */
  edgeMaxAgeSeconds: number;
}

/** What one run of the worker did. */
export interface TakedownRun {
  /** Paths sent (0: nothing was pending, and no request was made). */
  paths: number;
  invalidations: number;
  /** True when more were pending than one batch holds: they go next minute. */
  more: boolean;
}

/** The path an item stands for, from its key alone (an index projection always carries the keys). */
export function takedownPathOf(item: Pick<TakedownItem, 'pk'>): string {
  return item.pk.slice(KEY_PREFIX.length);
}

export class Takedowns {
  private readonly listing: ShardedListing;

  constructor(private readonly deps: TakedownsDeps) {
    this.listing = { index: 'listing', name: TAKEDOWN_LISTING_NAME, count: deps.shards };
  }

  /** Records `path` for the next batch (recording it again before then changes nothing but its time). */
  async record(path: string): Promise<void> {
    const now = this.deps.table.clock();
    const item: TakedownItem = {
      pk: `${KEY_PREFIX}${path}`,
      sk: 'takedown',
      gsi2pk: shardPartition(this.listing, path),
      gsi2sk: `${now.toISOString()}#${path}`,
      expires_at: epochSeconds(now) + this.deps.edgeMaxAgeSeconds,
    };
    await this.deps.table.put(item);
  }

  /** The oldest pending takedowns, at most `limit` (every shard queried at once). */
  async pending(limit = MAX_TAKEDOWN_PATHS): Promise<{ items: TakedownItem[]; more: boolean }> {
    const page = await readShards<TakedownItem>(this.deps.table, this.listing, {
      limit,
      order: 'oldest-first',
    });
    return { items: page.items, more: page.next_cursor !== null };
  }

  /**
   * One batch: the pending paths, oldest first, in one invalidation (at most MAX_TAKEDOWN_PATHS, of which at
   * most MAX_TAKEDOWN_WILDCARD_PATHS wildcards), then the items sent are deleted. A failed invalidation
   * throws and deletes nothing: the next run sends them again. While earlier batches still hold CloudFront's
   * allowance in flight it refuses the batch; that is no failure: nothing is sent and everything waits.
   */
  async send(invalidator: Invalidator): Promise<TakedownRun> {
    const { items: pending, more } = await this.pending();
    if (pending.length === 0) return { paths: 0, invalidations: 0, more: false };
    let wildcards = 0;
    const items = pending.filter((item) => {
      if (!isWildcardPath(takedownPathOf(item))) return true;
      wildcards += 1;
      return wildcards <= MAX_TAKEDOWN_WILDCARD_PATHS;
    });
    const left = more || items.length < pending.length;
    const paths = [...new Set(items.map(takedownPathOf))];
    try {
      await invalidator.invalidate(paths);
    } catch (error) {
      if ((error as { name?: string } | undefined)?.name === TOO_MANY_IN_FLIGHT)
        return { paths: 0, invalidations: 0, more: true };
      throw error;
    }
    for (let start = 0; start < items.length; start += PARALLEL_DELETES) {
      await Promise.all(
        items
          .slice(start, start + PARALLEL_DELETES)
          .map((item) => this.deps.table.delete({ pk: item.pk, sk: item.sk })),
      );
    }
    return { paths: paths.length, invalidations: 1, more: left };
  }
}
