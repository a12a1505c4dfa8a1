// The operator's block list of taken-down images (docs/MODERATION.md "The block list (never again)"): each
// entry holds the perceptual hash (perceptual-hash.ts) of a file taken down; an upload whose hash is within
// `moderation.block_distance` bits of an entry's is refused.
//
// Looking an upload up never reads the whole list: multi-index hashing. The 64 bits are cut into CHUNKS
// pieces, and each entry is written under one index item per piece, in the partition named by the piece's
// position and value (`blockhash#<position>#<value>`). Two hashes fewer than CHUNKS bits apart agree
// exactly on at least one piece (pigeonhole: CHUNKS - 1 differing bits touch at most CHUNKS - 1 pieces), so
// `nearest` queries the CHUNKS partitions of the upload's own pieces at once and measures the distance of
// what they hold. An entry and its index items are written and deleted in one transaction.
//
// CHUNKS = 7 (pieces of 10 bits and then six of 9), so MAX_BLOCK_DISTANCE = 6. Measured (docs/MODERATION.md):
// a copy resized to 70 %, re-encoded as JPEG q=60 and stripped moved by 0 to 6 bits (mean 2), unrelated
// images were 18 or more apart. A distance between two informative hashes is always even (each has exactly
// 31 of its 63 median-thresholded bits set), so 7 would allow nothing more than 6, and 5 no more than 4,
// which misses copies the measurement saw at 6. At a million entries a 9-bit piece's partition holds about
// 1,000,000 / 2^9 = 1,950 index items of about 75 bytes (the 10-bit one half that): one `nearest` reads
// seven such partitions, some 1 MB, about 120 read units (eventually consistent); the reads grow in
// proportion to the list. Eight pieces (8 bits: 3,900 items a partition) would read twice that for
// no more reach; six (11 bits) would reach only 4.
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import { MAX_PAGE_SIZE, type Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import { conditionFailedAs, type Key, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { hammingDistance, isPerceptualHash } from './perceptual-hash.ts';

/** Pieces the hash is cut into for the index. */
const CHUNKS = 7;
/** The largest `nearest` distance the index answers exactly: CHUNKS - 1 (pigeonhole, above). */
export const MAX_BLOCK_DISTANCE = CHUNKS - 1;

/** The partition name of the entries in the `listing` index (`block#<n>`, n the shard of the id). */
export const BLOCK_LISTING_NAME = 'block';
const ENTRY_PREFIX = 'block#';
const ENTRY_SORT_KEY = 'block';
const INDEX_PREFIX = 'blockhash#';
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface BlockEntry {
  id: string;
  /** The taken-down image's perceptual hash (16 hex digits). */
  hash: string;
  /** The file taken down, and whose it was. */
  file_id: string;
  owner_id: string;
  reason?: string;
  created_at: string;
  /** The administrator who took it down. */
  created_by: string;
}

export type NewBlockEntry = Omit<BlockEntry, 'id' | 'created_at'>;

export interface BlockListDeps {
  table: Table;
  /** `listing_shards`: the entries' listing is spread over this many shards. */
  shards: number;
}

interface EntryItem extends BlockEntry, Key {
  gsi2pk: string;
  gsi2sk: string;
  [attribute: string]: unknown;
}

/** The pieces of a hash from its top, each as `<position>#<value in hex>`: 10 bits, then 9 bits each. */
function pieces(hash: string): string[] {
  let rest = BigInt(`0x${hash}`);
  const out: string[] = [];
  for (let position = CHUNKS - 1; position >= 0; position -= 1) {
    const width = BigInt(Math.floor(64 / CHUNKS) + (position < 64 % CHUNKS ? 1 : 0));
    out.unshift(`${position}#${(rest & ((1n << width) - 1n)).toString(16)}`);
    rest >>= width;
  }
  return out;
}

const entryKey = (id: string): Key => ({ pk: `${ENTRY_PREFIX}${id}`, sk: ENTRY_SORT_KEY });
/** An entry's index items, one per piece of its hash: `blockhash#<position>#<value>` / `<id>`. */
const indexKeys = (entry: Pick<BlockEntry, 'id' | 'hash'>): Key[] =>
  pieces(entry.hash).map((piece) => ({ pk: `${INDEX_PREFIX}${piece}`, sk: entry.id }));

function entryOf(item: EntryItem): BlockEntry {
  const { pk: _pk, sk: _sk, gsi2pk: _gsi2pk, gsi2sk: _gsi2sk, ...entry } = item;
  return entry;
}

function checkHash(hash: string): void {
  if (!isPerceptualHash(hash)) throw errors.badRequest('hash: must be 16 lower-case hexadecimal digits');
}

export class BlockList {
  private readonly listing: ShardedListing;

  constructor(private readonly deps: BlockListDeps) {
    this.listing = { index: 'listing', name: BLOCK_LISTING_NAME, count: deps.shards };
  }

  /** Records an entry with its index items, all or nothing. The caller blocks informative hashes only. */
  async add(entry: NewBlockEntry): Promise<BlockEntry> {
    checkHash(entry.hash);
    const id = randomUUID();
    const now = this.deps.table.clock();
    const created: BlockEntry = { ...entry, id, created_at: isoWithOffset(now) };
    const item: EntryItem = {
      ...entryKey(id),
      ...created,
      gsi2pk: shardPartition(this.listing, id),
      gsi2sk: `${now.toISOString()}#${id}`,
    };
    const isNew = { ConditionExpression: 'attribute_not_exists(pk)' };
    await this.deps.table.transact([
      { Put: { Item: item, ...isNew } },
      ...indexKeys(created).map(
        (key): TransactItem => ({ Put: { Item: { ...key, hash: entry.hash }, ...isNew } }),
      ),
    ]);
    return created;
  }

  /** Deletes the entry and its index items, all or nothing; an unknown (or already removed) id is 404. */
  async remove(id: string): Promise<void> {
    const notFound = () => errors.notFound('block list entry: not found');
    if (!ID.test(id)) throw notFound();
    const item = await this.deps.table.get<EntryItem>(entryKey(id));
    if (!item) throw notFound();
    await this.deps.table
      .transact([
        { Delete: { Key: entryKey(id), ConditionExpression: 'attribute_exists(pk)' } },
        ...indexKeys(item).map((key): TransactItem => ({ Delete: { Key: key } })),
      ])
      .catch(conditionFailedAs(notFound));
  }

  /** One page of the entries, newest first, every shard read at once; a forged cursor is 400. */
  async list(options: { limit: number; cursor?: string | undefined }): Promise<Page<BlockEntry>> {
    // The entries of a page are read in one batch, which takes MAX_PAGE_SIZE keys at most.
    if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > MAX_PAGE_SIZE) {
      throw errors.badRequest(`query.limit: must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
    }
    const page = await readShards<EntryItem>(this.deps.table, this.listing, {
      ...options,
      order: 'newest-first',
    });
    // The index holds the keys and a few fields: the entries are read by key.
    const items =
      page.items.length === 0
        ? []
        : await this.deps.table.getMany<EntryItem>(page.items.map(({ pk, sk }) => ({ pk, sk })));
    return {
      items: items.filter((item): item is EntryItem => item !== undefined).map(entryOf),
      next_cursor: page.next_cursor,
    };
  }

  /**
   * The entry closest to `hash` within `maxDistance` bits (at most MAX_BLOCK_DISTANCE), or undefined: the
   * index partitions of the hash's pieces, read at once, then the distance of each entry they hold.
   */
  async nearest(hash: string, maxDistance: number): Promise<BlockEntry | undefined> {
    checkHash(hash);
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > MAX_BLOCK_DISTANCE) {
      throw errors.badRequest(`maxDistance: must be a whole number from 0 to ${MAX_BLOCK_DISTANCE}`);
    }
    const found = await Promise.all(indexKeys({ id: '', hash }).map(({ pk }) => this.partition(pk)));
    const candidates = new Map<string, number>();
    for (const item of found.flat()) {
      const distance = hammingDistance(hash, item.hash);
      if (distance <= maxDistance) candidates.set(item.id, distance);
    }
    const closest = [...candidates].sort((a, b) => a[1] - b[1]).slice(0, 100);
    if (closest.length === 0) return undefined;
    // Read by key: one removed since its index item was read is gone here too.
    const entries = await this.deps.table.getMany<EntryItem>(closest.map(([id]) => entryKey(id)));
    const entry = entries.find((item) => item !== undefined);
    return entry && entryOf(entry);
  }

  /**
   * Every index item of one partition, page by page. Eventually consistent (half the reads): an entry added
   * in the last second may be missed; one removed is not answered, as its entry is read by key.
   */
  private async partition(pk: string): Promise<Array<{ id: string; hash: string }>> {
    const out: Array<{ id: string; hash: string }> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const { items, lastKey } = await this.deps.table.query<{ sk: string; hash: string }>({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ProjectionExpression: 'sk, #hash',
        ExpressionAttributeNames: { '#hash': 'hash' },
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      out.push(...items.map(({ sk, hash }) => ({ id: sk, hash })));
      start = lastKey;
    } while (start);
    return out;
  }
}
