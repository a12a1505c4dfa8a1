// Accounts' items written in an older key shape (lib/platform/db/migration.ts, `npm run migrate:shards`):
// an identifier claim in the `owner` index's constant partition `idents` (which projected its login copy)
// or in a shard of another number after a change of `listing_shards` moves to the identifiers' listing in
// the shard of its value, its `owner` index attributes removed. Conditional on the holder and the index
// keys as read, so a claim released or taken again meanwhile is left to the request that changed it.
// Claims made before any search index are not listed: their account's next login lists them (login.ts).
import type { ItemMigration } from '#lib/platform/db/migration.ts';
import type { Item } from '#lib/platform/db/table.ts';
import { listingOf, tokenIdKey } from './api-tokens.ts';
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

const TOKEN_HASH_PREFIX = 'apitoken#';

/**
 * An API token listed through its hash item (whose key, the secret's hash, the index then held): its id
 * item takes the listing (what the listing shows, and the `owner` index attributes), then the hash item
 * leaves the index. The first update may run twice harmlessly; the second holds only while the hash item
 * is still listed as read.
 */
export const apiTokenListing: ItemMigration = {
  name: 'accounts: API tokens listed by their id item',
  plan(item: Item) {
    const { pk, sk, id, account_id: accountId, gsi1pk, gsi1sk } = item;
    if (typeof pk !== 'string' || !pk.startsWith(TOKEN_HASH_PREFIX) || sk !== 'apitoken') return undefined;
    if (typeof gsi1pk !== 'string' || typeof gsi1sk !== 'string') return undefined;
    if (typeof id !== 'string' || typeof accountId !== 'string') return undefined;
    const created = gsi1sk.slice(0, gsi1sk.lastIndexOf('#'));
    const shown: Record<string, unknown> = {
      ':name': item.name,
      ':prefix': item.prefix,
      ':created': item.created_at,
      ':epoch': item.token_epoch ?? 0,
      ':used': item.last_used_at ?? null,
    };
    return [
      {
        Key: tokenIdKey(id),
        UpdateExpression:
          'SET id = :id, #name = :name, prefix = :prefix, created_at = :created, token_epoch = if_not_exists(token_epoch, :epoch), last_used_at = if_not_exists(last_used_at, :used), gsi1pk = :ipk, gsi1sk = :isk',
        ConditionExpression: 'attribute_exists(pk) AND account_id = :account',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: {
          ...shown,
          ':account': accountId,
          ':id': id,
          ':ipk': listingOf(accountId, created, id).gsi1pk,
          ':isk': listingOf(accountId, created, id).gsi1sk,
        },
      },
      {
        Key: { pk, sk },
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'gsi1pk = :old',
        ExpressionAttributeValues: { ':old': gsi1pk },
      },
    ];
  },
};

export const accountsMigrations: ItemMigration[] = [identifierListingShards, apiTokenListing];
