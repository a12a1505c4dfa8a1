// Identifier claims: one item per username or e-mail, so both stay unique in one case-insensitive namespace.
// Claims are also the back office's search index: the `listing` index's partitions `idents#<n>` (n the
// shard of the lower-cased value, lib/platform/db/shards.ts), sorted by the lower-cased value, so a prefix
// search on username or e-mail is one range query per shard, all at once. The index projects only the
// claim's holder and kind: the login copy below stays in the table.
//
// A claim also carries a copy of what login needs before the password hash can run (docs/PERFORMANCE.md
// "Waits on the critical path"): the account's username (whose guessing guard to take) and its password hash. The account item
// stays the authority: login reads it beside the hash and verifies again against its hash when the copy
// differs, so a stale or missing copy costs time, never correctness. Every write of a password keeps the
// copies in step (repository.ts `syncLoginCopies`); claims made before the copy existed get it on the
// account's next successful login.
import { type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import type { TransactItem } from '#lib/platform/db/table.ts';

/** Usernames and e-mails share this key space, compared case-insensitively (docs/SPEC.md 2.1 rule 1). */
export const identifierKey = (value: string) => ({ pk: `ident#${value.trim().toLowerCase()}`, sk: 'ident' });

/** The listing of every claim (back-office search): shards `idents#<n>` of the `listing` index. */
export const IDENT_LISTING = 'idents';

/** The claims' listing with `count` shards. */
export function identifierListing(count: number): ShardedListing {
  return { index: 'listing', name: IDENT_LISTING, count };
}

export type IdentifierKind = 'username' | 'email';

/** The listing index's keys of a claim: the shard of the lower-cased value, sorted by that value. */
export function identifierIndex(value: string, listingShards: number) {
  const sortKey = value.trim().toLowerCase();
  return { gsi2pk: shardPartition(identifierListing(listingShards), sortKey), gsi2sk: sortKey };
}

/** What a claim copies from its account for login. */
export interface LoginCopy {
  username: string;
  password_hash: string;
}

/** A claim as stored; the copy is absent on claims made before it existed. */
export interface ClaimItem {
  pk: string;
  sk: string;
  account_id: string;
  kind: IdentifierKind;
  username?: string;
  password_hash?: string;
}

export function claimItem(
  value: string,
  accountId: string,
  kind: IdentifierKind,
  copy: LoginCopy,
  listingShards: number,
): TransactItem {
  return {
    Put: {
      Item: {
        ...identifierKey(value),
        account_id: accountId,
        kind,
        ...identifierIndex(value, listingShards),
        username: copy.username,
        password_hash: copy.password_hash,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Sets a claim's copy, provided the claim is still this account's. */
export function loginCopyUpdate(accountId: string, copy: LoginCopy) {
  return {
    UpdateExpression: 'SET username = :username, password_hash = :hash',
    ConditionExpression: 'account_id = :id',
    ExpressionAttributeValues: { ':username': copy.username, ':hash': copy.password_hash, ':id': accountId },
  };
}

/**
 * Puts a claim created before the index existed into it (same holder only); joins the transaction that
 * marks its account as indexed.
 */
export function indexClaimItem(value: string, accountId: string, listingShards: number): TransactItem {
  const index = identifierIndex(value, listingShards);
  return {
    Update: {
      Key: identifierKey(value),
      UpdateExpression: 'SET gsi2pk = :ipk, gsi2sk = :isk REMOVE gsi1pk, gsi1sk',
      ConditionExpression: 'account_id = :id',
      ExpressionAttributeValues: { ':ipk': index.gsi2pk, ':isk': index.gsi2sk, ':id': accountId },
    },
  };
}

export function releaseItem(value: string, accountId: string): TransactItem {
  return {
    Delete: {
      Key: identifierKey(value),
      ConditionExpression: 'account_id = :id',
      ExpressionAttributeValues: { ':id': accountId },
    },
  };
}

/** Whether two addresses are the same identifier (the namespace ignores case and outer spaces). */
export const sameAddress = (a: string | null | undefined, b: string | null | undefined) =>
  !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();
