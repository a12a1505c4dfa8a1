// One partition of a keys-only index, newest first, then its items by key in one batch read: an owner's
// albums, share links or files (the `owner` index), an album's files (the sparse `due` index). Both indexes
// keep only keys (a deployed index cannot change its projection), so the items are read by key. Never a
// scan, never a partition shared by owners.
import type { Role } from '#lib/accounts/model.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import { ANY_KEY_VALUE, decodeCursor, encodeCursor, type Item, type Table } from '#lib/platform/db/table.ts';

/** Each index's partition and sort key attributes. */
const INDEX_KEYS = {
  owner: { pk: 'gsi1pk', sk: 'gsi1sk' },
  due: { pk: 'gsi3pk', sk: 'gsi3sk' },
} as const;

export async function indexPage<T extends Item>(
  table: Table,
  index: keyof typeof INDEX_KEYS,
  partition: string,
  /** The items' own keys, so a cursor from another listing is refused (400). */
  itemKey: { pk: RegExp; sk: string },
  options: { limit: number; cursor?: string | undefined; prefix?: string },
): Promise<Page<T>> {
  const keys = INDEX_KEYS[index];
  const { prefix } = options;
  const startKey = decodeCursor(options.cursor, {
    ...itemKey,
    [keys.pk]: partition,
    [keys.sk]: ANY_KEY_VALUE,
  });
  const { items: found, lastKey } = await table.query<{ pk: string; sk: string }>({
    IndexName: index,
    KeyConditionExpression: `${keys.pk} = :partition${prefix ? ` AND begins_with(${keys.sk}, :prefix)` : ''}`,
    ExpressionAttributeValues: { ':partition': partition, ...(prefix ? { ':prefix': prefix } : {}) },
    ScanIndexForward: false,
    Limit: options.limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  });
  const items = found.length === 0 ? [] : await table.getMany<T>(found.map(({ pk, sk }) => ({ pk, sk })));
  return {
    items: items.filter((item): item is T => item !== undefined),
    next_cursor: encodeCursor(lastKey),
  };
}

/** One owner's items of one kind, newest first: their partition of the `owner` index. */
export function ownerIndexPage<T extends Item>(
  table: Table,
  partition: string,
  itemKey: { pk: RegExp; sk: string },
  options: { limit: number; cursor?: string | undefined; prefix?: string },
): Promise<Page<T>> {
  return indexPage<T>(table, 'owner', partition, itemKey, options);
}

/** Whose files: the account and its role (which says how its listing is kept). */
export interface FileOwner {
  id: string;
  role: Role;
}

const ownerIndex = (ownerId: string) => `files#${ownerId}`;

/**
 * An administrator's listing of files (the `owner` index), spread over `count` shards `files#<owner>#<n>`
 * like the gallery: administrators have no quota, and the static upload token's uploads are theirs, so
 * nothing bounds how fast their listing grows (docs/CAPACITY.md "Partition keys"). A role never changes,
 * so the reader knows the partitions from the owner's role; `files#<owner>` is read too (files from
 * before). Anyone else's is the one partition `files#<owner>`, bounded by their quota and rate.
 */
function ownerListing(owner: FileOwner, count: number): ShardedListing | undefined {
  if (owner.role !== 'admin') return undefined;
  return { index: 'owner', name: ownerIndex(owner.id), count, unsharded: ownerIndex(owner.id) };
}

/** The `owner` index partition of the owner's file `fileId`. */
export function ownerFilesPartition(owner: FileOwner, count: number, fileId: string): string {
  const sharded = ownerListing(owner, count);
  return sharded ? shardPartition(sharded, fileId) : ownerIndex(owner.id);
}

/** One page of the owner's files, newest first (an administrator's shards read at once and merged). */
export async function ownerFilesPage<T extends Item>(
  table: Table,
  owner: FileOwner,
  count: number,
  options: { limit: number; cursor?: string | undefined },
): Promise<Page<T>> {
  const sharded = ownerListing(owner, count);
  if (!sharded) return ownerIndexPage<T>(table, ownerIndex(owner.id), { pk: /^file#/, sk: 'file' }, options);
  const page = await readShards<T>(table, sharded, { ...options, order: 'newest-first' });
  const items =
    page.items.length === 0
      ? []
      : await table.getMany<T>(page.items.map(({ pk, sk }) => ({ pk: String(pk), sk: String(sk) })));
  return { items: items.filter((item): item is T => item !== undefined), next_cursor: page.next_cursor };
}
