// Listings of "everything" spread over shards (docs/CAPACITY.md, "Partition keys"): an item of such a
// listing is written under the index partition `<name>#<n>`, n chosen from the item's own id, so no index
// partition takes a write for every request of a kind (DynamoDB holds 1,000 WCU/s per partition, and a
// time-ordered sort key cannot be split). A page is read by querying every shard at once (one wait) and
// merging them in sort-key order.
//
// The listings' sort keys are unique across the listing (they end with the item's id), so one boundary is
// every shard's position: the cursor carries the last sort key shown and the shards already read to their
// end. A query asks for the boundary inclusively (DynamoDB's BETWEEN has no exclusive form) and the item
// at the boundary is left out.

import { type IndexName, TABLE } from './keys.ts';
import { type Item, invalidCursor, isKeyValue, type Table } from './table.ts';

/** Shards of each listing of everything unless the settings say otherwise (`table.listing_shards`). */
export const DEFAULT_SHARD_COUNT = 16;

/**
 * How many times its even share of a page each shard is asked for: with ids spread evenly, a shard gives
 * more than three times its share to one page rarely enough (well under one page in a hundred at 16 shards
 * and 60 items) that the second read is the exception.
 */
const SHARE_MARGIN = 3;

/** The largest string a prefix's range ends at: no identifier holds U+10FFFF. */
const PREFIX_END = '\u{10FFFF}';

/** A listing of everything: which index, the partition name its shards share, and how many there are. */
export interface ShardedListing {
  index: IndexName;
  name: string;
  count: number;
  /** One more partition read beside the shards (and counted after them): the listing's items from before it was sharded. */
  unsharded?: string;
}

/** The shard (0 to count - 1) of an item, from a stable seed (its id): FNV-1a, so ids spread evenly. */
export function shardOf(seed: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < seed.length; i += 1) {
    hash ^= seed.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/** The index partition an item of the listing is written under. */
export function shardPartition(listing: Pick<ShardedListing, 'name' | 'count'>, seed: string): string {
  return `${listing.name}#${shardOf(seed, listing.count)}`;
}

/**
 * Several listings of one index read as one (their sort keys unique across all of them and in one
 * order): the back office's all files is the gallery's shards and the private files' shards.
 */
export interface MergedListings {
  index: IndexName;
  names: readonly string[];
  count: number;
}

/** Every partition of the listing, shard 0 first. */
export function shardPartitions(listing: Pick<ShardedListing, 'name' | 'count'>): string[] {
  return Array.from({ length: listing.count }, (_, n) => `${listing.name}#${n}`);
}

export interface ShardReadOptions {
  limit: number;
  cursor?: string | undefined;
  /** `newest-first` reads sort keys descending (the default), `oldest-first` ascending. */
  order?: 'newest-first' | 'oldest-first';
  /** Inclusive bounds on the sort key. */
  from?: string;
  to?: string;
  /** Only sort keys beginning with this (instead of from/to). */
  prefix?: string;
}

export interface ShardPage<T> {
  items: T[];
  next_cursor: string | null;
}

interface ShardCursor {
  listing: string;
  after: string;
  done: number[];
}

/**
 * One page of the listing: every shard not read to its end is queried at once for its fair share of the
 * page with room to spare (SHARE_MARGIN times `limit` over the shards read), and the merged first `limit`
 * are returned. A shard whose share ran out before the page did (it has more, and what it gave ends inside
 * the page) is read on, for a whole page past where it stopped, before the page is cut: that second wait
 * is rare (items spread evenly over shards by id), and it keeps a page's read to about what it shows
 * rather than `limit` items from every shard (docs/CAPACITY.md "Partition keys").
 */
export async function readShards<T extends Item>(
  table: Table,
  listing: ShardedListing | MergedListings,
  options: ShardReadOptions,
): Promise<ShardPage<T>> {
  const { partitionKey, sortKey } = indexOf(listing.index);
  const names = 'names' in listing ? listing.names : [listing.name];
  // One list of partitions, each listing's shards in turn: `done` numbers them in this order.
  const partitions = names.flatMap((name) => shardPartitions({ name, count: listing.count }));
  if ('unsharded' in listing && listing.unsharded !== undefined) partitions.push(listing.unsharded);
  const read = { name: names.join('+'), count: partitions.length };
  const ascending = options.order === 'oldest-first';
  const cursor = decodeShardCursor(options.cursor, read);
  let from = options.prefix ?? options.from;
  let to = options.prefix === undefined ? options.to : `${options.prefix}${PREFIX_END}`;
  if (cursor) {
    if (ascending) from = from === undefined || compare(cursor.after, from) > 0 ? cursor.after : from;
    else to = to === undefined || compare(cursor.after, to) < 0 ? cursor.after : to;
    // A cursor of another range (another prefix) would ask DynamoDB for an empty BETWEEN: not ours.
    if (from !== undefined && to !== undefined && compare(from, to) > 0) throw invalidCursor();
  }
  const done = new Set(cursor?.done ?? []);
  const shards = partitions.map((partition, n) => ({ partition, n })).filter(({ n }) => !done.has(n));
  // One more than the page when the boundary item (already shown) may come back.
  const boundary = cursor ? 1 : 0;
  const share = Math.min(
    options.limit,
    Math.ceil((SHARE_MARGIN * options.limit) / Math.max(1, shards.length)),
  );
  const query = async (partition: string, limit: number, start?: Record<string, unknown>) => {
    const { items, lastKey } = await table.query<T>({
      IndexName: listing.index,
      KeyConditionExpression: `#pk = :partition${sortCondition(from, to)}`,
      ExpressionAttributeNames: {
        '#pk': partitionKey,
        ...(from !== undefined || to !== undefined ? { '#sk': sortKey } : {}),
      },
      ExpressionAttributeValues: {
        ':partition': partition,
        ...(from !== undefined ? { ':from': from } : {}),
        ...(to !== undefined ? { ':to': to } : {}),
      },
      ScanIndexForward: ascending,
      Limit: limit,
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    return { items: cursor ? items.filter((item) => item[sortKey] !== cursor.after) : items, lastKey };
  };
  const results = await Promise.all(
    shards.map(async ({ partition, n }) => ({ n, partition, ...(await query(partition, share + boundary)) })),
  );
  const before = (a: string, b: string) => (ascending ? compare(a, b) < 0 : compare(a, b) > 0);
  const pageEnd = (all: typeof results) =>
    all
      .flatMap(({ items }) => items.map((item) => String(item[sortKey])))
      .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
      .at(options.limit - 1);
  // Shards that stopped (with more to give) before the page's last item: what they hold next may belong.
  // Read on until none is left (once at most, unless expired items thinned what a shard gave).
  const stoppedShort = () => {
    const end = pageEnd(results);
    return results.filter(
      ({ lastKey }) => lastKey !== undefined && (end === undefined || before(String(lastKey[sortKey]), end)),
    );
  };
  for (let short = stoppedShort(); short.length > 0; short = stoppedShort()) {
    await Promise.all(
      short.map(async (result) => {
        const next = await query(result.partition, options.limit, result.lastKey);
        result.items = [...result.items, ...next.items];
        result.lastKey = next.lastKey;
      }),
    );
  }
  const sortOf = (item: T) => String(item[sortKey]);
  const merged = results
    .flatMap(({ n, items }) => items.map((item) => ({ n, item })))
    .sort((a, b) =>
      ascending ? compare(sortOf(a.item), sortOf(b.item)) : compare(sortOf(b.item), sortOf(a.item)),
    );
  const page = merged.slice(0, options.limit);
  const last = page.at(-1);
  // A shard is read to its end when DynamoDB had nothing more and every item it gave is on this page.
  const shown = new Map<number, number>();
  for (const { n } of page) shown.set(n, (shown.get(n) ?? 0) + 1);
  for (const { n, items, lastKey } of results) {
    if (lastKey === undefined && (shown.get(n) ?? 0) === items.length) done.add(n);
  }
  const finished = done.size === read.count;
  return {
    items: page.map(({ item }) => item),
    next_cursor:
      finished || last === undefined
        ? null
        : encodeShardCursor({
            listing: read.name,
            after: sortOf(last.item),
            done: [...done].sort((a, b) => a - b),
          }),
  };
}

function indexOf(name: IndexName) {
  const index = TABLE.indexes.find((candidate) => candidate.name === name);
  if (!index) throw new Error(`no index ${name}`);
  return index;
}

function sortCondition(from: string | undefined, to: string | undefined): string {
  if (from !== undefined && to !== undefined) return ' AND #sk BETWEEN :from AND :to';
  if (from !== undefined) return ' AND #sk >= :from';
  if (to !== undefined) return ' AND #sk <= :to';
  return '';
}

/** DynamoDB orders strings by their UTF-8 bytes; so does this (code points, unlike localeCompare). */
function compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function encodeShardCursor(cursor: ShardCursor): string {
  return Buffer.from(JSON.stringify([cursor.listing, cursor.after, cursor.done]), 'utf8').toString(
    'base64url',
  );
}

/** A cursor of this listing and shard count, or a 400 naming the problem. */
function decodeShardCursor(
  value: string | undefined,
  listing: { name: string; count: number },
): ShardCursor | undefined {
  if (!value) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 3 &&
    parsed[0] === listing.name &&
    // A sort key DynamoDB takes in a key condition (no more than 1,024 bytes, well-formed).
    isKeyValue(parsed[1]) &&
    Array.isArray(parsed[2]) &&
    parsed[2].length < listing.count &&
    parsed[2].every(
      (n: unknown) => Number.isInteger(n) && (n as number) >= 0 && (n as number) < listing.count,
    )
  ) {
    return { listing: parsed[0], after: parsed[1], done: parsed[2] as number[] };
  }
  throw invalidCursor();
}

/**
 * One shard of the listing, oldest first up to `to` (inclusive), page by page: a worker gives each shard its
 * own loop and runs them all at once (docs/CAPACITY.md "Workers"). Each page starts past the last key of
 * the one before, so an item moved out of the range while its page was worked on is never read twice.
 */
export async function* shardPages<T extends Item>(
  table: Table,
  listing: ShardedListing,
  shard: number,
  options: { pageSize: number; to?: string },
): AsyncGenerator<T[]> {
  const { partitionKey, sortKey } = indexOf(listing.index);
  let startKey: Record<string, unknown> | undefined;
  do {
    const { items, lastKey } = await table.query<T>({
      IndexName: listing.index,
      KeyConditionExpression: `#pk = :partition${sortCondition(undefined, options.to)}`,
      ExpressionAttributeNames: {
        '#pk': partitionKey,
        ...(options.to !== undefined ? { '#sk': sortKey } : {}),
      },
      ExpressionAttributeValues: {
        ':partition': `${listing.name}#${shard}`,
        ...(options.to !== undefined ? { ':to': options.to } : {}),
      },
      ScanIndexForward: true,
      Limit: options.pageSize,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    if (items.length > 0) yield items;
    startKey = lastKey;
  } while (startKey);
}
