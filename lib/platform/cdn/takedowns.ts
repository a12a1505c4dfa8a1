// Taking files out of the CDN fast (docs/UPLOADS.md "Deleting"): a takedown records its path here
// (`/i/<key>*`: the file and every rendition of it), and the takedowns worker (functions/takedowns), each
// minute, first lists every pending file on the edge's deny-list (deny-list.ts: the /i/* edge function then
// answers 404 for it, within seconds, at any rate of takedowns), then sends the oldest paths listed in ONE
// invalidation, within CloudFront's allowance, so the edges also drop their copies. An ordinary delete
// records nothing: the edge drops its copy within `cdn.deleted_max_age_seconds` (the /i/* cache policy's
// maximum), and an invalidation per delete would cost $5 per 1,000 paths past the free 1,000 a month and
// fail outright past 3,000 paths (15 wildcard paths) in flight.
//
// Items move through three listings of the `listing` index, each spread over its shards
// (lib/platform/db/shards.ts) so no partition takes every takedown: `takedown#<n>` (recorded, not yet on the
// deny-list), `invalidate#<n>` (on the deny-list, waiting for its invalidation), and the deny-list's own
// record `denied#<n>`, kept as long as the edge may hold a copy and then swept off the list. Pending items
// expire with the edge's own maximum age: past it the edge holds nothing to take out, so an item the worker
// never sent (CloudFront down for a day) lingers no longer than that.
import { readShards, type ShardedListing, shardPages, shardPartition } from '#lib/platform/db/shards.ts';
import { epochSeconds, type Item, type Key, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import {
  DENIED_LISTING_NAME,
  deniedKey,
  deniedObjectKeyOf,
  type EdgeDenyList,
  noEdgeDenyList,
} from './deny-list.ts';
import type { Invalidator } from './invalidator.ts';

/** The partition name of recorded takedowns in the `listing` index (`takedown#<n>`). */
export const TAKEDOWN_LISTING_NAME = 'takedown';
/** The partition name of takedowns on the deny-list waiting for their invalidation (`invalidate#<n>`). */
export const INVALIDATE_LISTING_NAME = 'invalidate';

/**
 * Takedowns put on the deny-list per run at most: five minutes of 1,000 takedowns a minute, so a backlog
 * clears within minutes; the rest wait for the next minute.
 */
export const MAX_DENIED_PER_RUN = 5000;
/** Items read per page of a shard. */
const PAGE = 100;
/** Items per BatchWriteItem. */
const BATCH_WRITE = 25;

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
  /** Files put on the edge's deny-list by this run. */
  denied: number;
  /** Paths sent (0: nothing was pending, and no request was made). */
  paths: number;
  invalidations: number;
  /** True when more were pending than one run takes: they go next minute. */
  more: boolean;
}

/** The path an item stands for, from its key alone (an index projection always carries the keys). */
export function takedownPathOf(item: Pick<TakedownItem, 'pk'>): string {
  return item.pk.slice(KEY_PREFIX.length);
}

/** The object key a takedown path stands for: `/i/<key>*` (or an older plain `/i/<key>`). */
export const objectKeyOfPath = (path: string): string => path.slice('/i/'.length).replace(/\*$/, '');

export class Takedowns {
  private readonly recorded: ShardedListing;
  private readonly toInvalidate: ShardedListing;
  private readonly denied: ShardedListing;

  constructor(private readonly deps: TakedownsDeps) {
    const listing = (name: string): ShardedListing => ({ index: 'listing', name, count: deps.shards });
    this.recorded = listing(TAKEDOWN_LISTING_NAME);
    this.toInvalidate = listing(INVALIDATE_LISTING_NAME);
    this.denied = listing(DENIED_LISTING_NAME);
  }

  /** Records `path` for the next batch (recording it again before then changes nothing but its time). */
  async record(path: string): Promise<void> {
    const now = this.deps.table.clock();
    const item: TakedownItem = {
      pk: `${KEY_PREFIX}${path}`,
      sk: 'takedown',
      gsi2pk: shardPartition(this.recorded, path),
      gsi2sk: `${now.toISOString()}#${path}`,
      expires_at: epochSeconds(now) + this.deps.edgeMaxAgeSeconds,
    };
    await this.deps.table.put(item);
  }

  /** The oldest takedowns waiting for their invalidation, at most `limit` (every shard queried at once). */
  async pending(limit = MAX_TAKEDOWN_PATHS): Promise<{ items: TakedownItem[]; more: boolean }> {
    const page = await readShards<TakedownItem>(this.deps.table, this.toInvalidate, {
      limit,
      order: 'oldest-first',
    });
    return { items: page.items, more: page.next_cursor !== null };
  }

  /**
   * One run of the worker: the deny-list's expired entries swept off, every recorded takedown (at most
   * MAX_DENIED_PER_RUN) put on it, then one invalidation (`invalidate`). A deny-list that cannot be written
   * fails the run after the invalidation: those takedowns stay recorded, and the next run lists them.
   */
  async send(invalidator: Invalidator, edge: EdgeDenyList = noEdgeDenyList): Promise<TakedownRun> {
    await this.sweep(edge);
    const denied = await this.deny(edge).catch((error: unknown) => ({ count: 0, more: true, error }));
    const sent = await this.invalidate(invalidator);
    if ('error' in denied) throw denied.error;
    return { denied: denied.count, ...sent, more: denied.more || sent.more };
  }

  /**
   * Every recorded takedown on the deny-list (each shard its own page loop, all at once), kept there for the
   * edge's maximum age; its record moves on to wait for its invalidation.
   */
  private async deny(edge: EdgeDenyList): Promise<{ count: number; more: boolean }> {
    const { table, edgeMaxAgeSeconds } = this.deps;
    const untilMs = table.clock().getTime() + edgeMaxAgeSeconds * 1000;
    let budget = MAX_DENIED_PER_RUN;
    let count = 0;
    let more = false;
    const readShard = async (shard: number) => {
      for await (const page of shardPages<TakedownItem>(table, this.recorded, shard, { pageSize: PAGE })) {
        if (budget <= 0) {
          more = true;
          return;
        }
        const items = page.slice(0, budget);
        budget -= items.length;
        const keys = [...new Set(items.map((item) => objectKeyOfPath(takedownPathOf(item))))];
        await edge.put(keys, untilMs);
        const until = new Date(untilMs).toISOString();
        await this.writeAll([
          ...keys.map((key) => ({
            ...deniedKey(key),
            until_ms: untilMs,
            gsi2pk: shardPartition(this.denied, key),
            gsi2sk: `${until}#${key}`,
            // Swept at its end; the table's TTL only if no worker ever ran again.
            expires_at: Math.ceil(untilMs / 1000) + edgeMaxAgeSeconds,
          })),
          ...items.map((item) => ({
            ...item,
            gsi2pk: shardPartition(this.toInvalidate, takedownPathOf(item)),
          })),
        ]);
        count += items.length;
      }
    };
    await Promise.all(Array.from({ length: this.deps.shards }, (_, shard) => readShard(shard)));
    return { count, more };
  }

  /** Entries whose end has passed, off the edge's list and then out of the table. */
  private async sweep(edge: EdgeDenyList): Promise<void> {
    const { table } = this.deps;
    const to = `${table.clock().toISOString()}~`;
    let swept = 0;
    const readShard = async (shard: number) => {
      for await (const page of shardPages(table, this.denied, shard, { pageSize: PAGE, to })) {
        await edge.remove(page.map(deniedObjectKeyOf));
        await this.writeAll(
          [],
          page.map((item) => ({ pk: String(item.pk), sk: String(item.sk) })),
        );
        swept += page.length;
      }
    };
    await Promise.all(Array.from({ length: this.deps.shards }, (_, shard) => readShard(shard)));
    if (swept > 0) log.info('taken-down files past the edge’s maximum age left the deny-list', { swept });
  }

  /** Unconditional puts and deletes, BATCH_WRITE to a request, all at once. */
  private async writeAll(puts: Array<Item & Key>, deletes: Key[] = []): Promise<void> {
    const requests: Array<Promise<void>> = [];
    for (let start = 0; start < puts.length; start += BATCH_WRITE)
      requests.push(this.deps.table.writeBatch(puts.slice(start, start + BATCH_WRITE)));
    for (let start = 0; start < deletes.length; start += BATCH_WRITE)
      requests.push(this.deps.table.writeBatch([], deletes.slice(start, start + BATCH_WRITE)));
    await Promise.all(requests);
  }

  /**
   * One invalidation: the oldest paths on the deny-list, at most MAX_TAKEDOWN_PATHS, of which at most
   * MAX_TAKEDOWN_WILDCARD_PATHS wildcards, then the items sent are deleted. A failed invalidation throws and
   * deletes nothing: the next run sends them again. While earlier batches still hold CloudFront's allowance
   * in flight it refuses the batch; that is no failure: nothing is sent and everything waits.
   */
  private async invalidate(invalidator: Invalidator): Promise<Omit<TakedownRun, 'denied'>> {
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
    await this.writeAll(
      [],
      items.map((item) => ({ pk: item.pk, sk: item.sk })),
    );
    return { paths: paths.length, invalidations: 1, more: left };
  }
}
