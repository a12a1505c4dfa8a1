// The static upload token's quota (`upload.api_token_quota_bytes`) spread over TOKEN_BUCKETS items, each on
// a partition key of its own, so that no item takes every upload made with the token (docs/CAPACITY.md
// "Partition keys"). Each bucket keeps its counters and `room`, the bytes it may still take, balanced
// under `quota`. An upload takes its bytes from one bucket with room for them (chosen at random, conditioned
// on that room); when none has room, or the quota changed, one transaction balances every bucket again
// (each conditioned on its `rev` as read): the room left, less the upload, shared evenly, the upload
// counted in one of them. Room is only ever moved or given back by a deletion, so the token's usage plus
// every bucket's room never passes the quota: "at most" stays exact however many uploads race.
import type { TransactItem } from '#lib/platform/db/table.ts';
import {
  isTokenItem,
  type ReservePlan,
  slotKey,
  TOKEN_BUCKETS,
  tokenSlot,
  USAGE_SK,
  type UsageItem,
  usageStateOf,
} from './usage.ts';

/** The token's own usage items: the single item (its uploads from before the buckets) and the buckets. */
export const tokenItems = (items: readonly UsageItem[]) =>
  items.filter((item) => item.sk === USAGE_SK || isTokenItem(item));

/** Counts `bytes` in one of the token's buckets (the caller checked they fit its usage as read). */
export function tokenReserveItems(
  accountId: string,
  items: readonly UsageItem[],
  bytes: number,
  quota: number,
): ReservePlan {
  const buckets = Array.from({ length: TOKEN_BUCKETS }, (_, n) => {
    const key = slotKey(accountId, tokenSlot(n));
    return { key, item: items.find((item) => item.pk === key.pk && item.sk === key.sk) };
  });
  const values = { ':account': accountId, ':one': 1, ':quota': quota };
  const open = buckets.flatMap(({ item }, n) =>
    item && item.quota === quota && (item.room ?? 0) >= bytes ? [n] : [],
  );
  if (open.length > 0) {
    const n = open[Math.floor(Math.random() * open.length)]!;
    return {
      slot: tokenSlot(n),
      items: [
        {
          Update: {
            Key: buckets[n]!.key,
            UpdateExpression:
              'SET account_id = :account ADD used_bytes :bytes, file_count :one, rev :one, room :taken',
            ConditionExpression: 'quota = :quota AND room >= :bytes',
            ExpressionAttributeValues: { ...values, ':bytes': bytes, ':taken': -bytes },
          },
        },
      ],
    };
  }
  const left = quota - usageStateOf(accountId, tokenItems(items)).usedBytes - bytes;
  const chosen = Math.floor(Math.random() * TOKEN_BUCKETS);
  return {
    slot: tokenSlot(chosen),
    items: buckets.map(({ key, item }, n): TransactItem => {
      const counted = n === chosen ? ', used_bytes :bytes, file_count :one' : '';
      const rev = item?.rev;
      return {
        Update: {
          Key: key,
          UpdateExpression: `SET account_id = :account, quota = :quota, room = :room ADD rev :one${counted}`,
          ConditionExpression: rev === undefined ? 'attribute_not_exists(rev)' : 'rev = :rev',
          ExpressionAttributeValues: {
            ...values,
            ':room': Math.floor(left / TOKEN_BUCKETS) + (n < left % TOKEN_BUCKETS ? 1 : 0),
            ...(counted ? { ':bytes': bytes } : {}),
            ...(rev === undefined ? {} : { ':rev': rev }),
          },
        },
      };
    }),
  };
}
