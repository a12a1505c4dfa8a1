// The per-account usage: bytes and files counted, and the storage grant. An account with a quota keeps
// one item, so that every write that moves one of them can be conditioned on the others. An account
// without one (administrators) spreads its counters over USAGE_SHARDS items chosen from each file's id,
// and the static upload token's uploads go to TOKEN_BUCKETS buckets (lib/files/usage-buckets.ts): each
// on a partition key of its own (`usage#<account>#<slot>`), since DynamoDB holds 1,000 writes a second per
// partition, whatever the sort keys. Reading is one Query of `usage#<account>` (the single item, and the
// shards written before they had partition keys of their own, sort keys `usage#<n>`) beside one BatchGet
// of the spread items: no migration is needed. Only transaction items are built here; the callers put
// them in the same transaction as the record, the deletion or the settlement they count.
import { shardOf } from '#lib/platform/db/shards.ts';
import type { Item, Table, TransactItem } from '#lib/platform/db/table.ts';
import type { Grant, UsageState } from './quota-model.ts';

/** The account's single usage item: the counters of an account with a quota, and the grant of any. */
export const usageKey = (accountId: string) => ({ pk: `usage#${accountId}`, sk: USAGE_SK });

/** Sort key of the single usage item; every usage item's sort key begins with it. */
export const USAGE_SK = 'usage';

/** Counter items of an account without a quota. Fixed, not a setting: readers get each by its key. */
export const USAGE_SHARDS = 16;
/** The static token's buckets (lib/files/usage-buckets.ts), fixed the same way. */
export const TOKEN_BUCKETS = 8;
export const tokenSlot = (bucket: number) => `t${bucket}`;

/**
 * The usage item of a slot as a file's record names it (`usage_item`): absent or `usage`, the single item;
 * `usage#<n>`, a shard of before (under the account's partition key); `s<n>` a shard, `t<n>` a static
 * token bucket, each under its own partition key.
 */
export function slotKey(accountId: string, slot: UsageSlot = USAGE_SK) {
  if (slot === USAGE_SK || slot.startsWith(`${USAGE_SK}#`)) return { pk: `usage#${accountId}`, sk: slot };
  return { pk: `usage#${accountId}#${slot}`, sk: `${USAGE_SK}#${slot}` };
}

/** The account a usage item counts for, from its partition key (`usage#<account>[#<slot>]`). */
export const usageAccountOf = (pk: string) => pk.split('#')[1] ?? '';

/** Every spread item's slot: the shards, then the static token's buckets. */
export const SPREAD_SLOTS = [
  ...Array.from({ length: USAGE_SHARDS }, (_, n) => `s${n}`),
  ...Array.from({ length: TOKEN_BUCKETS }, (_, n) => tokenSlot(n)),
];

/** Whether a usage item is one of the static token's buckets. */
export const isTokenItem = (item: Pick<UsageItem, 'sk'>) => item.sk.startsWith(`${USAGE_SK}#t`);

/** A usage item. `rev` moves with every change of its counters (the recount script conditions on it). */
export interface UsageItem extends Item {
  pk: string;
  /** `usage` (the single item), or `usage#<slot>` (a shard or a bucket: counters only, never a grant). */
  sk: string;
  account_id: string;
  used_bytes?: number;
  file_count?: number;
  rev?: number;
  grant?: Grant;
  /**
   * Presigned uploads not yet confirmed, by pending id (single item only; lib/files/quota-presign.ts), and
   * the sum of their bytes, expired entries included until a presign prunes them.
   */
  presigned?: Record<string, PresignHold>;
  presigned_bytes?: number;
  /** A static token bucket's bytes still free, of the quota `quota` it was last balanced under. */
  room?: number;
  quota?: number;
}

/** One presigned upload's bytes, held against the quota until it is confirmed or expires. */
export interface PresignHold {
  bytes: number;
  /** epoch seconds: the presign's own expiry; a hold past it counts for nothing */
  expires_at: number;
}

/** Accounts' usage read at once by `readMany`. */
const PARALLEL_READS = 16;

/** The state of one account from all its usage items (none yet: zero). */
export function usageStateOf(accountId: string, items: readonly UsageItem[]): UsageState {
  let usedBytes = 0;
  let fileCount = 0;
  let grant: Grant | undefined;
  for (const item of items) {
    usedBytes += item.used_bytes ?? 0;
    fileCount += item.file_count ?? 0;
    if (item.sk === USAGE_SK && item.grant) grant = item.grant;
  }
  return { accountId, usedBytes, fileCount, ...(grant ? { grant } : {}) };
}

export interface UsageRepositoryDeps {
  table: Table;
}

export class UsageRepository {
  readonly table: Table;

  constructor(deps: UsageRepositoryDeps) {
    this.table = deps.table;
  }

  /**
   * The account's usage items (the single one, and unless `spread` is false the shards and buckets: only
   * administrators have any), strongly consistent: a reservation or a grant decided on them is conditioned
   * on what was read.
   */
  async items(accountId: string, spread = true): Promise<UsageItem[]> {
    const keys = spread ? SPREAD_SLOTS.map((slot) => slotKey(accountId, slot)) : [];
    const [own, others] = await Promise.all([
      this.partitionItems(accountId),
      keys.length > 0 ? this.table.getMany<UsageItem>(keys) : Promise.resolve([]),
    ]);
    return [...own, ...others.filter((item): item is UsageItem => item !== undefined)];
  }

  /** The items under `usage#<account>`: the single one and the shards of before. */
  private async partitionItems(accountId: string): Promise<UsageItem[]> {
    const items: UsageItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.table.query<UsageItem>({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :usage)',
        ExpressionAttributeValues: { ':pk': usageKey(accountId).pk, ':usage': USAGE_SK },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      items.push(...page.items);
      start = page.lastKey;
    } while (start);
    return items;
  }

  async read(accountId: string): Promise<UsageState> {
    return usageStateOf(accountId, await this.items(accountId));
  }

  /** Many accounts' usage (a back-office page), PARALLEL_READS at a time; `spread`: whose to read too. */
  async readMany(
    accountIds: readonly string[],
    spread: (accountId: string) => boolean = () => true,
  ): Promise<Map<string, UsageState>> {
    const unique = [...new Set(accountIds)];
    const out = new Map<string, UsageState>();
    for (let start = 0; start < unique.length; start += PARALLEL_READS) {
      const ids = unique.slice(start, start + PARALLEL_READS);
      const states = await Promise.all(
        ids.map(async (id) => usageStateOf(id, await this.items(id, spread(id)))),
      );
      for (const state of states) out.set(state.accountId, state);
    }
    return out;
  }
}

/** The condition that the account's grant is still the one `state` holds (none, or the same order's). */
export function sameGrant(state: UsageState): { expression: string; values: Record<string, unknown> } {
  return state.grant
    ? { expression: '#grant.order_id = :grantOrder', values: { ':grantOrder': state.grant.order_id } }
    : { expression: 'attribute_not_exists(#grant)', values: {} };
}

/** Where a file's bytes were counted (slotKey; absent on the record: the single item). */
export type UsageSlot = string;

/** What a reservation writes (in the record's transaction) and the slot the record keeps. */
export interface ReservePlan {
  items: TransactItem[];
  slot: UsageSlot;
}

/**
 * Adds file `fileId` of `bytes` to the account's usage. With a quota, the write goes to the single item
 * and holds only while the usage still leaves room (`used_bytes <= quota - bytes`) and the grant the quota
 * came from is unchanged; an account never written yet starts at zero (the write creates its item).
 * Without a quota it goes, unconditioned, to the file's shard (the static token's: usage-buckets.ts).
 * `slot` is recorded on the file, so its deletion gives the bytes back to the same item.
 */
export function reserveItems(
  state: UsageState,
  fileId: string,
  bytes: number,
  quotaBytes: number | null,
): ReservePlan {
  const slot = quotaBytes === null ? `s${shardOf(fileId, USAGE_SHARDS)}` : USAGE_SK;
  const update = {
    Key: slotKey(state.accountId, slot),
    UpdateExpression: 'SET account_id = :account ADD used_bytes :bytes, file_count :one, rev :one',
  };
  const values = { ':account': state.accountId, ':bytes': bytes, ':one': 1 };
  if (quotaBytes === null)
    return { items: [{ Update: { ...update, ExpressionAttributeValues: values } }], slot };
  const grant = sameGrant(state);
  return {
    items: [
      {
        Update: {
          ...update,
          ConditionExpression: `(attribute_not_exists(used_bytes) OR used_bytes <= :room) AND ${grant.expression}`,
          ExpressionAttributeNames: { '#grant': 'grant' },
          ExpressionAttributeValues: { ...values, ':room': quotaBytes - bytes, ...grant.values },
        },
      },
    ],
    slot,
  };
}

/**
 * Gives back the bytes of one counted file (deleted in the same transaction) to the usage item that
 * counted them (`slot`, as recorded on the file; absent: the single item); a bucket gets them as room.
 */
export function releaseItem(accountId: string, bytes: number, slot: UsageSlot = USAGE_SK): TransactItem {
  const room = /^t\d+$/.test(slot) ? ', room :room' : '';
  return {
    Update: {
      Key: slotKey(accountId, slot),
      UpdateExpression: `SET account_id = :account ADD used_bytes :bytes, file_count :minusOne, rev :one${room}`,
      ExpressionAttributeValues: {
        ':account': accountId,
        ':bytes': -bytes,
        ':minusOne': -1,
        ':one': 1,
        ...(room ? { ':room': bytes } : {}),
      },
    },
  };
}

/**
 * Removes the account's grant (a refund took back all it gave), provided it is still the one `state` was
 * read with.
 */
export function grantRemovalItem(state: UsageState): TransactItem {
  const condition = sameGrant(state);
  return {
    Update: {
      Key: usageKey(state.accountId),
      UpdateExpression: 'REMOVE #grant',
      ConditionExpression: condition.expression,
      ExpressionAttributeNames: { '#grant': 'grant' },
      ExpressionAttributeValues: condition.values,
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
