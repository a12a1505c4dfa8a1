// Identifier claims: one item per username or e-mail, so both stay unique in one case-insensitive namespace.
// Claims are also the back office's search index: gsi1 partition `idents`, sorted by the lower-cased value,
// so a prefix search on username or e-mail is one range query.
import type { TransactItem } from '../db/repository.ts';

/** Usernames and e-mails share this key space, compared case-insensitively (docs/SPEC.md 2.1 rule 1). */
export const identifierKey = (value: string) => ({ pk: `ident#${value.trim().toLowerCase()}`, sk: 'ident' });

/** The gsi1 partition holding every claim (back-office search). */
export const IDENT_INDEX = 'idents';

export type IdentifierKind = 'username' | 'email';

export function identifierIndex(value: string) {
  return { gsi1pk: IDENT_INDEX, gsi1sk: value.trim().toLowerCase() };
}

export function claimItem(value: string, accountId: string, kind: IdentifierKind): TransactItem {
  return {
    Put: {
      Item: { ...identifierKey(value), account_id: accountId, kind, ...identifierIndex(value) },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/**
 * Puts a claim created before the index existed into it (same holder only); joins the transaction that
 * marks its account as indexed.
 */
export function indexClaimItem(value: string, accountId: string): TransactItem {
  const index = identifierIndex(value);
  return {
    Update: {
      Key: identifierKey(value),
      UpdateExpression: 'SET gsi1pk = :ipk, gsi1sk = :isk',
      ConditionExpression: 'account_id = :id',
      ExpressionAttributeValues: { ':ipk': index.gsi1pk, ':isk': index.gsi1sk, ':id': accountId },
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
