// Coupons as stored (docs/DESIGN.md 17): the coupon, its code's uniqueness item, each buyer's redemption
// count, and each pending order's hold, with the transaction items that take a redemption in the order's
// own write and give it back when the order is cancelled or expires unpaid.
import { randomUUID } from 'node:crypto';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import type { Item, Key, Table, TransactItem } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export interface Coupon {
  id: string;
  /** As the administrator wrote it; unique ignoring case. */
  code: string;
  percent_off: number | null;
  amount_off_cents: number | null;
  min_amount_cents: number | null;
  /** null: no limit. */
  max_redemptions: number | null;
  per_account_limit: number;
  starts_at: string | null;
  ends_at: string | null;
  /** null: every plan. */
  plan_ids: string[] | null;
  active: boolean;
  /** Orders placed with it that are not cancelled or expired unpaid (its buckets' and its older count). */
  redemptions: number;
  created_at: string;
  updated_at: string;
}

export const couponKey = (id: string): Key => ({ pk: `coupon#${id}`, sk: 'coupon' });
/** The code's uniqueness item: its key is the code in lower case, so `SPRING` and `spring` are one code. */
export const couponCodeKey = (code: string): Key => ({ pk: `couponcode#${code.toLowerCase()}`, sk: 'code' });
/** How many orders of one buyer hold the coupon now (its own partition: no buyer writes another's). */
export const redemptionKey = (couponId: string, userId: string): Key => ({
  pk: `couponuse#${couponId}#${userId}`,
  sk: 'use',
});
/**
 * A coupon's redemption count is spread over COUPON_BUCKETS items (docs/CAPACITY.md "Coupons"), so no item
 * takes every order placed with a popular coupon; the coupon's own `redemptions` keeps only the count of
 * orders placed before the buckets. An unlimited coupon's orders add to a random bucket with no condition;
 * a limited one's split what is left of `max_redemptions` between its buckets (bucketCap), each bucket
 * refusing past its share, so the sum never passes the limit however many orders race.
 */
export const COUPON_BUCKETS = 16;
export const couponCountKey = (couponId: string, bucket: number): Key => ({
  pk: `couponcount#${couponId}#${bucket}`,
  sk: 'count',
});

/** The buckets a coupon's orders use: all for an unlimited one; no more than its limit for a limited one. */
export function bucketsOf(coupon: Pick<Coupon, 'max_redemptions'>): number {
  return coupon.max_redemptions === null
    ? COUPON_BUCKETS
    : Math.max(1, Math.min(COUPON_BUCKETS, coupon.max_redemptions));
}

/**
 * How many of a limited coupon's redemptions bucket `bucket` may hold: what is left of the limit after the
 * older count and any bucket outside the coupon's (a limit lowered since), split evenly, the first buckets
 * one more. Every bucket's share together is that room, so the buckets together never pass the limit.
 */
export function bucketCap(coupon: Coupon, counts: readonly number[], bucket: number): number {
  const used = bucketsOf(coupon);
  const sum = (list: readonly number[]) => list.reduce((total, count) => total + count, 0);
  // `redemptions` as read with `counts`: the buckets' sum and the older count on the coupon's own item.
  const older = coupon.redemptions - sum(counts);
  const room = Math.max(0, (coupon.max_redemptions ?? 0) - older - sum(counts.slice(used)));
  return Math.floor(room / used) + (bucket < room % used ? 1 : 0);
}

/** A pending order's hold of a redemption; in the `due` index by deadline until it is given back. */
export const holdKey = (orderId: string): Key => ({ pk: `couponhold#${orderId}`, sk: 'hold' });

/** Every coupon, newest first (administrators), spread over `listing_shards` shards. */
export const ALL_COUPONS = 'coupons';
/** Holds of pending orders by deadline (the `due` index), spread the same way. */
export const COUPON_HOLDS = 'couponholds';

export const COUPON_ID_PATTERN = /^[0-9a-f-]{36}$/;
export const COUPON_CODE_PATTERN = /^[A-Za-z0-9_-]{3,32}$/;

/** A pending order's hold as stored: its coupon, buyer and the bucket it counts in (none: the older count). */
export interface CouponHoldItem {
  order_id: string;
  coupon_id: string;
  user_id: string;
  bucket?: number;
}

/** A pending order's hold as the `due` index lists it. */
export interface CouponHold {
  order_id: string;
  deadline_ms: number;
}

/** The coupon with `redemptions` its older count (its own item's) plus its buckets'. */
const withCounts = (coupon: Coupon, counts: readonly number[]): Coupon => ({
  ...coupon,
  redemptions: coupon.redemptions + counts.reduce((total, count) => total + count, 0),
});

function fromItem(item: Item | undefined): Coupon | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi2pk: _a, gsi2sk: _b, ...coupon } = item;
  return coupon as unknown as Coupon;
}

export interface CouponRepositoryDeps {
  table: Table;
  /** `listing_shards`: how many shards the coupon listing and the holds spread over. */
  listingShards: number;
}

export class CouponRepository {
  readonly table: Table;
  private readonly all: ShardedListing;
  private readonly holds: ShardedListing;

  constructor(deps: CouponRepositoryDeps) {
    this.table = deps.table;
    this.all = { index: 'listing', name: ALL_COUPONS, count: deps.listingShards };
    this.holds = { index: 'due', name: COUPON_HOLDS, count: deps.listingShards };
  }

  /** The coupon and its code's uniqueness item in one transaction: a code taken (any case) fails it. */
  async create(fields: Omit<Coupon, 'id' | 'redemptions' | 'created_at' | 'updated_at'>, now: Date) {
    const at = now.toISOString();
    const stamp = isoWithOffset(now);
    const coupon: Coupon = {
      id: randomUUID(),
      ...fields,
      redemptions: 0,
      created_at: stamp,
      updated_at: stamp,
    };
    await this.table.transact([
      {
        Put: {
          Item: {
            ...couponKey(coupon.id),
            ...coupon,
            gsi2pk: shardPartition(this.all, coupon.id),
            gsi2sk: `${at}#${coupon.id}`,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          Item: { ...couponCodeKey(coupon.code), coupon_id: coupon.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);
    return coupon;
  }

  async get(id: string): Promise<Coupon | undefined> {
    return (await this.getCounted(id))?.coupon;
  }

  /** The coupon, its `redemptions` the sum of its buckets and its older count, and the buckets' counts. */
  async getCounted(id: string): Promise<{ coupon: Coupon; counts: number[] } | undefined> {
    if (!COUPON_ID_PATTERN.test(id)) return undefined;
    const [item, counts] = await Promise.all([this.table.get(couponKey(id)), this.bucketCounts(id)]);
    const coupon = fromItem(item);
    return coupon && { coupon: withCounts(coupon, counts), counts };
  }

  /** Each bucket's count of the coupon's redemptions, bucket 0 first (read together). */
  private async bucketCounts(couponId: string): Promise<number[]> {
    const items = await this.table.getMany(
      Array.from({ length: COUPON_BUCKETS }, (_, bucket) => couponCountKey(couponId, bucket)),
    );
    return items.map((item) => (typeof item?.used === 'number' ? item.used : 0));
  }

  /** The id of the coupon holding this code (any case), from the code's own item. */
  async idOfCode(code: string): Promise<string | undefined> {
    if (!COUPON_CODE_PATTERN.test(code)) return undefined;
    const claim = await this.table.get(couponCodeKey(code));
    return typeof claim?.coupon_id === 'string' ? claim.coupon_id : undefined;
  }

  /** Orders of this buyer holding the coupon now. */
  async usedBy(couponId: string, userId: string): Promise<number> {
    const item = await this.table.get(redemptionKey(couponId, userId));
    return typeof item?.used === 'number' ? item.used : 0;
  }

  /** Newest first: every shard at once, then the coupons themselves (the index holds only their keys). */
  async list(limit: number, cursor?: string): Promise<Page<Coupon>> {
    const page = await readShards(this.table, this.all, { limit, cursor, order: 'newest-first' });
    const items =
      page.items.length === 0
        ? []
        : await this.table.getMany(page.items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) })));
    const coupons = items.flatMap((item) => fromItem(item) ?? []);
    const counts = await Promise.all(coupons.map((coupon) => this.bucketCounts(coupon.id)));
    return {
      items: coupons.map((coupon, at) => withCounts(coupon, counts[at] ?? [])),
      next_cursor: page.next_cursor,
    };
  }

  async update(
    id: string,
    changes: Partial<Pick<Coupon, 'active' | 'ends_at' | 'max_redemptions'>>,
    now: Date,
  ) {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':now': isoWithOffset(now) };
    const sets = ['updated_at = :now'];
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    return fromItem(
      await this.table.update(couponKey(id), {
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      }),
    )!;
  }

  /** The coupon and its code go; orders placed with it keep their copy of the code and the discount. */
  async delete(coupon: Coupon): Promise<void> {
    await this.table.transact([
      { Delete: { Key: couponKey(coupon.id), ConditionExpression: 'attribute_exists(pk)' } },
      { Delete: { Key: couponCodeKey(coupon.code) } },
      ...Array.from({ length: COUPON_BUCKETS }, (_, bucket) => ({
        Delete: { Key: couponCountKey(coupon.id, bucket) },
      })),
    ]);
  }

  /**
   * The writes that take one redemption for a new order, in the order's own transaction: one bucket of the
   * coupon's count (a limited coupon's below its share, bucketCap over `counts` as read just before), the
   * buyer's count (below the coupon's `per_account_limit`) and the order's hold (listed by deadline, so an
   * order that expires unpaid gives it back; it names its bucket). Their places in the transaction: 1, 2, 3
   * after the order's put. The coupon's own item is not written: its state was checked by the quote.
   */
  redeemItems(
    coupon: Coupon,
    taking: { bucket: number; counts: readonly number[] },
    userId: string,
    orderId: string,
    deadlineMs: number,
  ): TransactItem[] {
    const limited = coupon.max_redemptions !== null;
    return [
      {
        Update: {
          Key: couponCountKey(coupon.id, taking.bucket),
          UpdateExpression: 'SET coupon_id = :coupon ADD used :one',
          ...(limited ? { ConditionExpression: 'attribute_not_exists(used) OR used < :cap' } : {}),
          ExpressionAttributeValues: {
            ':one': 1,
            ':coupon': coupon.id,
            ...(limited ? { ':cap': bucketCap(coupon, taking.counts, taking.bucket) } : {}),
          },
        },
      },
      {
        Update: {
          Key: redemptionKey(coupon.id, userId),
          UpdateExpression: 'SET coupon_id = :coupon, user_id = :user ADD used :one',
          ConditionExpression: 'attribute_not_exists(used) OR used < :limit',
          ExpressionAttributeValues: {
            ':one': 1,
            ':limit': coupon.per_account_limit,
            ':coupon': coupon.id,
            ':user': userId,
          },
        },
      },
      {
        Put: {
          Item: {
            ...holdKey(orderId),
            // `id` and `deadline_ms` are what the `due` index carries.
            id: orderId,
            deadline_ms: deadlineMs,
            coupon_id: coupon.id,
            user_id: userId,
            bucket: taking.bucket,
            gsi3pk: shardPartition(this.holds, orderId),
            gsi3sk: `${new Date(deadlineMs).toISOString()}#${orderId}`,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
  }

  /**
   * The writes that give one order's redemption back: its hold removed (it must still be there, so a
   * redemption is given back once) and both counts lowered. `couponExists` false: the coupon was deleted,
   * only the buyer's count is lowered.
   */
  releaseItems(hold: CouponHoldItem, couponExists = true) {
    const items: TransactItem[] = [
      { Delete: { Key: holdKey(hold.order_id), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Update: {
          Key: redemptionKey(hold.coupon_id, hold.user_id),
          UpdateExpression: 'ADD used :minus',
          ConditionExpression: 'used > :zero',
          ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        },
      },
    ];
    if (hold.bucket !== undefined) {
      items.push({
        Update: {
          Key: couponCountKey(hold.coupon_id, hold.bucket),
          UpdateExpression: 'ADD used :minus',
          ConditionExpression: 'used > :zero',
          ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        },
      });
    } else if (couponExists) {
      // A hold from before the buckets: its redemption was counted on the coupon's own item.
      items.push({
        Update: {
          Key: couponKey(hold.coupon_id),
          UpdateExpression: 'ADD redemptions :minus',
          ConditionExpression: 'attribute_exists(pk) AND redemptions > :zero',
          ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        },
      });
    }
    return items;
  }

  /** The hold's item (coupon and buyer), if the order still holds a redemption. */
  async hold(orderId: string): Promise<CouponHoldItem | undefined> {
    const item = await this.table.get(holdKey(orderId));
    if (!item) return undefined;
    return {
      order_id: orderId,
      coupon_id: String(item.coupon_id),
      user_id: String(item.user_id),
      ...(typeof item.bucket === 'number' ? { bucket: item.bucket } : {}),
    };
  }

  /** Holds whose order's deadline is at or before `now`, the oldest first (every shard at once). */
  async holdsDueBy(now: Date, limit: number, cursor?: string): Promise<Page<CouponHold>> {
    const page = await readShards(this.table, this.holds, {
      limit,
      cursor,
      order: 'oldest-first',
      to: `${now.toISOString()}~`,
    });
    return {
      items: page.items.map((item) => ({ order_id: String(item.id), deadline_ms: Number(item.deadline_ms) })),
      next_cursor: page.next_cursor,
    };
  }
}
