// Accounts' items written in an older key shape (lib/platform/db/migration.ts, `npm run migrate:shards`):
// an identifier claim in the `owner` index's constant partition `idents` (which projected its login copy)
// or in a shard of another number after a change of `listing_shards` moves to the identifiers' listing in
// the shard of its value, its `owner` index attributes removed. Conditional on the holder and the index
// keys as read, so a claim released or taken again meanwhile is left to the request that changed it.
// Claims made before any search index are not listed: their account's next login lists them (login.ts).
import type { ItemMigration } from '#lib/platform/db/migration.ts';
import type { Item } from '#lib/platform/db/table.ts';
import { identifierIndex } from './identifiers.ts';

const CLAIM_PREFIX = 'ident#';

export const identifierListingShards: ItemMigration = {
  name: 'accounts: identifier listing shards',
  plan(item: Item, { listingShards }) {
    const { pk, sk, account_id: accountId, gsi1pk, gsi2pk, gsi2sk } = item;
    if (typeof pk !== 'string' || !pk.startsWith(CLAIM_PREFIX) || sk !== 'ident') return undefined;
    if (typeof accountId !== 'string') return undefined;
    // Never indexed at all: left to the account's next login, as before.
    if (gsi1pk === undefined && gsi2pk === undefined) return undefined;
    const wanted = identifierIndex(pk.slice(CLAIM_PREFIX.length), listingShards);
    if (gsi1pk === undefined && gsi2pk === wanted.gsi2pk && gsi2sk === wanted.gsi2sk) return undefined;
    const conditions = [
      'account_id = :id',
      typeof gsi1pk === 'string' ? 'gsi1pk = :old1' : 'attribute_not_exists(gsi1pk)',
      typeof gsi2pk === 'string' ? 'gsi2pk = :old2' : 'attribute_not_exists(gsi2pk)',
    ];
    return {
      Key: { pk, sk },
      UpdateExpression: 'SET gsi2pk = :pk, gsi2sk = :sk REMOVE gsi1pk, gsi1sk',
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: {
        ':pk': wanted.gsi2pk,
        ':sk': wanted.gsi2sk,
        ':id': accountId,
        ...(typeof gsi1pk === 'string' ? { ':old1': gsi1pk } : {}),
        ...(typeof gsi2pk === 'string' ? { ':old2': gsi2pk } : {}),
      },
    };
  },
};

export const accountsMigrations: ItemMigration[] = [identifierListingShards];
