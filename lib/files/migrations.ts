// Files written in an older key shape (lib/platform/db/migration.ts, `npm run migrate:shards`): a file
// record listed under the constant partitions `gallery#public` / `files#private`, under none (records
// older than the listings), or in a shard of another number after a change of `listing_shards`, moves to
// its permission's listing in the shard of its id. Conditional on the permission and the listing as read:
// a permission change meanwhile has written the right shard itself, and wins.
import type { ItemMigration } from '#lib/platform/db/migration.ts';
import type { Item } from '#lib/platform/db/table.ts';
import { fileListingKeys } from './files.ts';
import type { Permission } from './record.ts';

const isPermission = (value: unknown): value is Permission => value === 'public' || value === 'private';

export const fileListingShards: ItemMigration = {
  name: 'files: listing shards',
  plan(item: Item, { listingShards }) {
    const { pk, sk, id, permission, gsi1sk, gsi2pk, gsi2sk } = item;
    if (typeof pk !== 'string' || !pk.startsWith('file#') || sk !== 'file') return undefined;
    if (typeof id !== 'string' || !isPermission(permission) || typeof gsi1sk !== 'string') return undefined;
    const wanted = fileListingKeys({ id, permission, gsi1sk }, listingShards);
    if (gsi2pk === wanted.gsi2pk && gsi2sk === wanted.gsi2sk) return undefined;
    return {
      Key: { pk, sk },
      UpdateExpression: 'SET gsi2pk = :pk, gsi2sk = :sk',
      ConditionExpression: `#permission = :permission AND gsi1sk = :sk AND ${
        typeof gsi2pk === 'string' ? 'gsi2pk = :old' : 'attribute_not_exists(gsi2pk)'
      }`,
      ExpressionAttributeNames: { '#permission': 'permission' },
      ExpressionAttributeValues: {
        ':pk': wanted.gsi2pk,
        ':sk': wanted.gsi2sk,
        ':permission': permission,
        ...(typeof gsi2pk === 'string' ? { ':old': gsi2pk } : {}),
      },
    };
  },
};

export const filesMigrations: ItemMigration[] = [fileListingShards];
