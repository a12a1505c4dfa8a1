// The listings of everything a file record is in (index `listing`): the public gallery and the private
// files, each spread over `listing_shards` shards (lib/platform/db/shards.ts).
import { type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import type { Permission } from './record.ts';

/** The listing of public files: shards `gallery#public#<n>` of the `listing` index. */
export const GALLERY_LISTING = 'gallery#public';
/** The listing of private files: with the gallery's, every file (the back office's listing). */
export const PRIVATE_LISTING = 'files#private';

/** The listing a file of this permission belongs to, with `count` shards. */
export function fileListing(permission: Permission, count: number): ShardedListing {
  return { index: 'listing', name: permission === 'public' ? GALLERY_LISTING : PRIVATE_LISTING, count };
}

/** The listing index's keys of a file: its permission's listing, in the shard of its id. */
export function fileListingKeys(
  item: { id: string; permission: Permission; gsi1sk: string },
  count: number,
): { gsi2pk: string; gsi2sk: string } {
  return { gsi2pk: shardPartition(fileListing(item.permission, count), item.id), gsi2sk: item.gsi1sk };
}
