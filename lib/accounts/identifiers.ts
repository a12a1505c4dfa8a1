// Identifier claims: one item per username or e-mail, so both stay unique in one case-insensitive namespace.
import type { TransactItem } from '../db/repository.ts';

/** Usernames and e-mails share this key space, compared case-insensitively (SPEC.md 2.1 rule 1). */
export const identifierKey = (value: string) => ({ pk: `ident#${value.trim().toLowerCase()}`, sk: 'ident' });

export function claimItem(value: string, accountId: string, kind: 'username' | 'email'): TransactItem {
  return {
    Put: {
      Item: { ...identifierKey(value), account_id: accountId, kind },
      ConditionExpression: 'attribute_not_exists(pk)',
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
