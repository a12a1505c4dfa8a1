// The per-account usage item: bytes and files counted, and the storage grant, in one item so that every
// write that moves one of them can be conditioned on the others. Only transaction items are built here;
// the callers put them in the same transaction as the record, the deletion or the settlement they count.
import type { Item, Table, TransactItem } from '#lib/platform/db/table.ts';
import type { Grant, UsageState } from './quota-model.ts';

export const usageKey = (accountId: string) => ({ pk: `usage#${accountId}`, sk: 'usage' });

/** The usage item. `rev` moves with every change of the counters (the recount script conditions on it). */
export interface UsageItem extends Item {
  pk: string;
  sk: 'usage';
  account_id: string;
  used_bytes?: number;
  file_count?: number;
  rev?: number;
  grant?: Grant;
}

/** BatchGetItem takes at most 100 keys. */
const BATCH_KEYS = 100;

export function usageStateOf(accountId: string, item: UsageItem | undefined): UsageState {
  return {
    accountId,
    usedBytes: item?.used_bytes ?? 0,
    fileCount: item?.file_count ?? 0,
    ...(item?.grant ? { grant: item.grant } : {}),
  };
}

export class UsageRepository {
  constructor(readonly table: Table) {}

  /** Strongly consistent: a reservation or a grant decided on it is conditioned on what it read. */
  async read(accountId: string): Promise<UsageState> {
    return usageStateOf(accountId, await this.table.get<UsageItem>(usageKey(accountId)));
  }

  /** Many accounts' usage, 100 per round trip. */
  async readMany(accountIds: readonly string[]): Promise<Map<string, UsageState>> {
    const unique = [...new Set(accountIds)];
    const out = new Map<string, UsageState>();
    for (let start = 0; start < unique.length; start += BATCH_KEYS) {
      const ids = unique.slice(start, start + BATCH_KEYS);
      const items = await this.table.getMany<UsageItem>(ids.map(usageKey));
      ids.forEach((id, index) => {
        out.set(id, usageStateOf(id, items[index]));
      });
    }
    return out;
  }
}

/** The condition that the account's grant is still the one `state` holds (none, or the same order's). */
function sameGrant(state: UsageState): { expression: string; values: Record<string, unknown> } {
  return state.grant
    ? { expression: '#grant.order_id = :grantOrder', values: { ':grantOrder': state.grant.order_id } }
    : { expression: 'attribute_not_exists(#grant)', values: {} };
}

/**
 * Adds one file of `bytes` to the account's usage. With a quota, the write holds only while the usage
 * still leaves room (`used_bytes <= quota - bytes`) and the grant the quota came from is unchanged; an
 * account never written yet starts at zero (the write creates its item).
 */
export function reserveItem(state: UsageState, bytes: number, quotaBytes: number | null): TransactItem {
  const update = {
    Key: usageKey(state.accountId),
    UpdateExpression: 'SET account_id = :account ADD used_bytes :bytes, file_count :one, rev :one',
  };
  const values = { ':account': state.accountId, ':bytes': bytes, ':one': 1 };
  if (quotaBytes === null) return { Update: { ...update, ExpressionAttributeValues: values } };
  const grant = sameGrant(state);
  return {
    Update: {
      ...update,
      ConditionExpression: `(attribute_not_exists(used_bytes) OR used_bytes <= :room) AND ${grant.expression}`,
      ExpressionAttributeNames: { '#grant': 'grant' },
      ExpressionAttributeValues: { ...values, ':room': quotaBytes - bytes, ...grant.values },
    },
  };
}

/** Gives back the bytes of one counted file (deleted in the same transaction). */
export function releaseItem(accountId: string, bytes: number): TransactItem {
  return {
    Update: {
      Key: usageKey(accountId),
      UpdateExpression: 'SET account_id = :account ADD used_bytes :bytes, file_count :minusOne, rev :one',
      ExpressionAttributeValues: { ':account': accountId, ':bytes': -bytes, ':minusOne': -1, ':one': 1 },
    },
  };
}

/** Writes the account's grant, provided it is still the one `state` was read with. */
export function grantItem(state: UsageState, grant: Grant): TransactItem {
  const condition = sameGrant(state);
  return {
    Update: {
      Key: usageKey(state.accountId),
      UpdateExpression: 'SET account_id = :account, #grant = :grant',
      ConditionExpression: condition.expression,
      ExpressionAttributeNames: { '#grant': 'grant' },
      ExpressionAttributeValues: { ':account': state.accountId, ':grant': grant, ...condition.values },
    },
  };
}
