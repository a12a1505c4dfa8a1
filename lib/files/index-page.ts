// One partition of a keys-only index, newest first, then its items by key in one batch read: an owner's
// albums, share links or files (the `owner` index), an album's files (the sparse `due` index). Both indexes
// keep only keys (a deployed index cannot change its projection), so the items are read by key. Never a
// scan, never a partition shared by owners.
import type { Page } from '#lib/platform/db/paging.ts';
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
  options: { limit: number; cursor?: string | undefined },
): Promise<Page<T>> {
  const keys = INDEX_KEYS[index];
  const startKey = decodeCursor(options.cursor, {
    ...itemKey,
    [keys.pk]: partition,
    [keys.sk]: ANY_KEY_VALUE,
  });
  const { items: found, lastKey } = await table.query<{ pk: string; sk: string }>({
    IndexName: index,
    KeyConditionExpression: `${keys.pk} = :partition`,
    ExpressionAttributeValues: { ':partition': partition },
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
  options: { limit: number; cursor?: string | undefined },
): Promise<Page<T>> {
  return indexPage<T>(table, 'owner', partition, itemKey, options);
}
