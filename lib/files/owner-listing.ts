// One owner's items of one kind (albums, share links), newest first: their keys from the owner's partition of
// the `owner` index (which keeps only keys: a deployed index cannot change its projection), then the items by
// key in one batch read. Never a scan, never a partition shared by owners.
import type { Page } from '#lib/platform/db/paging.ts';
import { ANY_KEY_VALUE, decodeCursor, encodeCursor, type Item, type Table } from '#lib/platform/db/table.ts';

export async function ownerIndexPage<T extends Item>(
  table: Table,
  partition: string,
  /** The items' own keys, so a cursor from another listing is refused (400). */
  itemKey: { pk: RegExp; sk: string },
  options: { limit: number; cursor?: string | undefined },
): Promise<Page<T>> {
  const startKey = decodeCursor(options.cursor, { ...itemKey, gsi1pk: partition, gsi1sk: ANY_KEY_VALUE });
  const { items: keys, lastKey } = await table.query<{ pk: string; sk: string }>({
    IndexName: 'owner',
    KeyConditionExpression: 'gsi1pk = :partition',
    ExpressionAttributeValues: { ':partition': partition },
    ScanIndexForward: false,
    Limit: options.limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  });
  const items = keys.length === 0 ? [] : await table.getMany<T>(keys.map(({ pk, sk }) => ({ pk, sk })));
  return {
    items: items.filter((item): item is T => item !== undefined),
    next_cursor: encodeCursor(lastKey),
  };
}
