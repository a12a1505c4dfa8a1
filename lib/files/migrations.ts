// Files written in an older key shape (lib/platform/db/migration.ts, `npm run migrate:shards`): a file
// record listed under the constant partitions `gallery#public` / `files#private`, under none (records
// older than the listings), or in a shard of another number after a change of `listing_shards`, moves to
// its permission's listing in the shard of its id. Conditional on the permission and the listing as read:
// a permission change meanwhile has written the right shard itself, and wins. An administrator's listing
// entry (`files#<owner>#<n>`, lib/files/index-page.ts) in a shard of another number moves the same way.
// A record from before names were searched gets its name item.
import type { ItemMigration } from '#lib/platform/db/migration.ts';
import type { Item } from '#lib/platform/db/table.ts';
import { nameKey } from './file-index.ts';
import { fileListingKeys } from './files.ts';
import { ownerFilesPartition } from './index-page.ts';
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

export const fileOwnerShards: ItemMigration = {
  name: 'files: administrators’ listing shards',
  plan(item: Item, { listingShards }) {
    const { pk, sk, id, owner_id: ownerId, gsi1pk } = item;
    if (typeof pk !== 'string' || !pk.startsWith('file#') || sk !== 'file') return undefined;
    if (typeof id !== 'string' || typeof ownerId !== 'string' || typeof gsi1pk !== 'string') return undefined;
    // Only a sharded entry has a shard to be wrong in; `files#<owner>` is read as it is.
    if (!gsi1pk.startsWith(`files#${ownerId}#`)) return undefined;
    const wanted = ownerFilesPartition({ id: ownerId, role: 'admin' }, listingShards, id);
    if (gsi1pk === wanted) return undefined;
    return {
      Key: { pk, sk },
      UpdateExpression: 'SET gsi1pk = :pk',
      ConditionExpression: 'gsi1pk = :old',
      ExpressionAttributeValues: { ':pk': wanted, ':old': gsi1pk },
    };
  },
};

/**
 * A record from before names were searched gets its name item (lib/files/file-index.ts), then its mark. A
 * record deleted in between leaves its name item behind, which search skips (its record is not found).
 */
export const fileNameItems: ItemMigration = {
  name: 'files: name items',
  plan(item: Item) {
    const { pk, sk, id, owner_id: ownerId, original_name: name, gsi1sk } = item;
    if (typeof pk !== 'string' || !pk.startsWith('file#') || sk !== 'file' || item.name_indexed === true)
      return undefined;
    if (typeof id !== 'string' || typeof ownerId !== 'string' || typeof name !== 'string') return undefined;
    const file = { id, owner_id: ownerId, original_name: name, gsi1sk: String(gsi1sk) };
    return [
      {
        Key: nameKey(file),
        UpdateExpression: 'SET file_id = :id',
        ConditionExpression: 'attribute_not_exists(pk) OR file_id = :id',
        ExpressionAttributeValues: { ':id': id },
      },
      {
        Key: { pk, sk },
        UpdateExpression: 'SET name_indexed = :yes',
        ConditionExpression: 'owner_id = :owner AND original_name = :name',
        ExpressionAttributeValues: { ':yes': true, ':owner': ownerId, ':name': name },
      },
    ];
  },
};

export const filesMigrations: ItemMigration[] = [fileListingShards, fileOwnerShards, fileNameItems];
