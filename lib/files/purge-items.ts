// What a file's final deletion writes (docs/UPLOADS.md "Expiring uploads", "Trash"). A file that expires or
// sits in the trash has a purge mark `purge#<id>`: in the `listing` index under `purges#<n>` sorted by when
// it is due (the lifecycle worker's sweep reads what is due, never a scan), and in the `owner` index under
// `purges#<owner>` (`trash#...` sort keys: the owner's trash, newest first; account deletion reads them all).
// The mark copies what a purge needs (key, hash, size, usage slot), so a record DynamoDB's TTL removed
// first still has its bytes, renditions, claim and usage taken care of.
import { shardPartition } from '#lib/platform/db/shards.ts';
import type { TransactItem } from '#lib/platform/db/table.ts';
import { indexDeletes, tagsAsRead } from './file-index.ts';
import { type FileItem, fileKey, hashClaimKey } from './files.ts';
import { releaseItem } from './usage.ts';

export const purgeMarkKey = (id: string) => ({ pk: `purge#${id}`, sk: 'purge' });
export const PURGES_LISTING = 'purges';
export const ownerPurgesPartition = (ownerId: string) => `purges#${ownerId}`;
/** Sort keys of a trashed file's mark in its owner's partition begin with this. */
export const TRASH_SORT_PREFIX = 'trash#';

/** The mark as stored: what a purge needs when the record is gone. */
export interface PurgeMark {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  key: string;
  hash: string;
  size: number;
  usage_counted?: boolean;
  usage_item?: string;
  /** ISO: when the sweep purges it (the earlier of its expiry and the end of its time in the trash). */
  due: string;
  trashed_at?: string;
  [attribute: string]: unknown;
}

/**
 * The mark of `item`, due at `due`; `trashedAt` when it goes to the trash (its owner's trash lists it).
 * Null when nothing is due: a live file that never expires.
 */
export function purgeMark(item: FileItem, shards: number, trashedAt?: Date, trashDays = 0): PurgeMark | null {
  const ends = [
    ...(typeof item.expires_at === 'number' ? [item.expires_at * 1000] : []),
    ...(trashedAt ? [trashedAt.getTime() + trashDays * 86_400_000] : []),
  ];
  if (ends.length === 0) return null;
  const due = new Date(Math.min(...ends)).toISOString();
  const since = trashedAt?.toISOString();
  return {
    ...purgeMarkKey(item.id),
    id: item.id,
    owner_id: item.owner_id,
    key: item.key,
    hash: item.hash,
    size: item.size,
    ...(item.usage_counted ? { usage_counted: true } : {}),
    ...(item.usage_item ? { usage_item: item.usage_item } : {}),
    due,
    ...(since ? { trashed_at: since } : {}),
    gsi1pk: ownerPurgesPartition(item.owner_id),
    gsi1sk: `${since ? `${TRASH_SORT_PREFIX}${since}` : `expiry#${due}`}#${item.id}`,
    gsi2pk: shardPartition({ name: PURGES_LISTING, count: shards }, item.id),
    gsi2sk: `${due}#${item.id}`,
  };
}

/**
 * Removes the record (only while it is the same owner's and its usage_counted and tags are as read), its
 * look-up items (lib/files/file-index.ts; a record DynamoDB's TTL removed first leaves them to the same
 * TTL, written on them with the record's, and search skips them meanwhile), its purge mark,
 * and its hash claim when `claimed` (the claim is still this file's: a later upload of the same bytes may
 * hold it once this one expired or went to the trash), giving its bytes back to the owner's usage when
 * they were counted there. `item` may be a mark whose record is gone (`recordGone`).
 */
export function deletion(
  item: FileItem | PurgeMark,
  options: { claimed: boolean; recordGone?: boolean },
): TransactItem[] {
  const counted = item.usage_counted === true;
  if (options.recordGone)
    return [
      { Delete: { Key: purgeMarkKey(item.id), ConditionExpression: 'attribute_exists(pk)' } },
      ...claimAndUsage(item, options.claimed, counted),
    ];
  const record = item as FileItem;
  const tags = tagsAsRead(record);
  return [
    {
      Delete: {
        Key: fileKey(item.id),
        ConditionExpression: `owner_id = :owner AND ${tags.condition} AND ${
          counted ? 'usage_counted = :counted' : 'attribute_not_exists(usage_counted)'
        }`,
        ExpressionAttributeValues: {
          ':owner': item.owner_id,
          ...tags.values,
          ...(counted ? { ':counted': true } : {}),
        },
      },
    },
    { Delete: { Key: purgeMarkKey(item.id) } },
    ...indexDeletes(record),
    ...claimAndUsage(item, options.claimed, counted),
  ];
}

/** The hash claim when it is still this file's, and the owner's usage given back when it was counted. */
function claimAndUsage(item: FileItem | PurgeMark, claimed: boolean, counted: boolean): TransactItem[] {
  return [
    ...(claimed
      ? [
          {
            Delete: {
              Key: hashClaimKey(item.owner_id, item.hash),
              ConditionExpression: 'attribute_not_exists(pk) OR file_id = :id',
              ExpressionAttributeValues: { ':id': item.id },
            },
          },
        ]
      : []),
    ...(counted ? [releaseItem(item.owner_id, item.size, item.usage_item)] : []),
  ];
}
