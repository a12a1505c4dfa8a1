// Order records: creation, listings, the reconciler's schedule (the `due` index), and the conditional writes
// that move an order out of `pending`.

import { planLinkItem } from '#lib/files/owner-rules.ts';
import type { GrantWrite } from '#lib/files/quota-service.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPages, shardPartition } from '#lib/platform/db/shards.ts';
import {
  ANY_KEY_VALUE,
  decodeCursor,
  encodeCursor,
  type Item,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { PaidVia, StoredOrder, StoredStatus } from './model.ts';
import { ORDER_PAID, orderPaidDetail } from './order-events.ts';
import { orderEventOutboxPut } from './outbox.ts';
import { renewalItem } from './renewals.ts';

export const orderKey = (id: string) => ({ pk: `order#${id}`, sk: 'order' });
/** The buyer of an order whose account was deleted: nobody. */
export const DELETED_BUYER = 'deleted-account';
const userIndex = (userId: string) => `orders#user#${userId}`;
/** Every order, newest first (administrators), spread over `listing_shards` shards of the listing index. */
export const ALL_ORDERS = 'orders';
/** Pending channel orders by their next check (lib/billing/reconcile.ts), spread the same way. */
export const DUE_ORDERS = 'due';

/** The sort key of an order in the all-orders listing and its buyer's: creation to the millisecond, then the id. */
export const listingSortKey = (createdAt: Date, id: string) => `${createdAt.toISOString()}#${id}`;
/** The sort key of an order in the reconciler's schedule: its next check, then the id. */
export const dueSortKey = (checkAt: Date, id: string) => `${checkAt.toISOString()}#${id}`;

/** What removes an order from the reconciler's schedule, in every write that moves it out of `pending`. */
const LEAVE_SCHEDULE = 'REMOVE gsi3pk, gsi3sk';

function fromItem(item: Item | undefined): StoredOrder | undefined {
  if (!item) return undefined;
  const {
    pk: _pk,
    sk: _sk,
    gsi1pk: _a,
    gsi1sk: _b,
    gsi2pk: _c,
    gsi2sk: _d,
    gsi3pk: _e,
    gsi3sk: _f,
    reconcile_checks: _g,
    ...order
  } = item;
  return order as unknown as StoredOrder;
}

/** A pending channel order as the reconciler's schedule holds it (the `due` index's projection). */
export interface DueOrder {
  id: string;
  provider: string;
  deadline_ms: number;
  /** Checks made so far. */
  reconcile_checks: number;
  /** Its place in the schedule as read: a write moving it holds only while it is still there. */
  due_key: string;
}

function dueOrderOf(item: Item): DueOrder {
  return {
    id: String(item.id),
    provider: String(item.provider),
    deadline_ms: Number(item.deadline_ms),
    reconcile_checks: typeof item.reconcile_checks === 'number' ? item.reconcile_checks : 0,
    due_key: String(item.gsi3sk),
  };
}

export interface SettleInput {
  /** The status the order was read in: the write succeeds only if nobody moved it since. */
  expectedStatus: Exclude<StoredStatus, 'paid'>;
  /** Also require the deadline not to have passed (owner and on-time paths). */
  requireUnexpiredAt?: Date;
  via: PaidVia;
  tradeNo?: string;
  lateFrom?: 'expired' | 'cancelled' | 'failed';
  now: Date;
  paidAt: string;
}

export interface OrderRepositoryDeps {
  table: Table;
  /** `listing_shards`: how many shards the all-orders listing and the schedule spread over. */
  listingShards: number;
}

export class OrderRepository {
  private readonly all: ShardedListing;
  private readonly due: ShardedListing;

  constructor(private readonly deps: OrderRepositoryDeps) {
    this.all = { index: 'listing', name: ALL_ORDERS, count: deps.listingShards };
    this.due = { index: 'due', name: DUE_ORDERS, count: deps.listingShards };
  }

  /**
   * Writes a new order whole, in one write. `now` orders listings to the millisecond (created_at shows whole
   * seconds). With `firstCheck` (a pending channel order) it also enters the reconciler's schedule.
   */
  async create(
    order: StoredOrder,
    now: Date,
    options: { firstCheck?: Date | undefined; together?: TransactItem[] } = {},
  ): Promise<void> {
    const sortKey = listingSortKey(now, order.id);
    const item = {
      ...orderKey(order.id),
      ...order,
      gsi1pk: userIndex(order.user_id),
      gsi1sk: sortKey,
      gsi2pk: shardPartition(this.all, order.id),
      gsi2sk: sortKey,
      ...(options.firstCheck ? this.scheduleFields(order.id, options.firstCheck) : {}),
    };
    if (!options.together?.length) {
      await this.deps.table.putNew(item);
      return;
    }
    // With a coupon's redemption (lib/billing/coupons.ts): the order is written only if it is taken too.
    await this.deps.table.transact([
      { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      ...options.together,
    ]);
  }

  /** The attributes placing an order in the reconciler's schedule, first check at `checkAt`. */
  scheduleFields(id: string, checkAt: Date) {
    return {
      gsi3pk: shardPartition(this.due, id),
      gsi3sk: dueSortKey(checkAt, id),
      reconcile_checks: 0,
    };
  }

  async get(id: string): Promise<StoredOrder | undefined> {
    return fromItem(await this.deps.table.get(orderKey(id)));
  }

  /**
   * An order kept for accounting after its buyer's account was deleted (docs/ACCOUNTS.md "Deleting an
   * account"): the buyer becomes DELETED_BUYER and the order leaves the buyer's listing.
   */
  async anonymize(id: string): Promise<void> {
    await this.deps.table.update(orderKey(id), {
      UpdateExpression: 'SET user_id = :nobody REMOVE gsi1pk, gsi1sk',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':nobody': DELETED_BUYER },
    });
  }

  /** Newest first. */
  async listByUser(userId: string, limit: number, cursor?: string): Promise<Page<StoredOrder>> {
    // The owner index's key of one of this buyer's orders, nothing else: another buyer's would be
    // DynamoDB's ValidationException (a start key outside the queried partition), a 500.
    const startKey = decodeCursor(cursor, {
      pk: /^order#/,
      sk: 'order',
      gsi1pk: userIndex(userId),
      gsi1sk: ANY_KEY_VALUE,
    });
    const { items, lastKey } = await this.deps.table.query({
      IndexName: 'owner',
      KeyConditionExpression: '#pk = :value',
      ExpressionAttributeNames: { '#pk': 'gsi1pk' },
      ExpressionAttributeValues: { ':value': userIndex(userId) },
      ScanIndexForward: false,
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    return { items: await this.whole(items), next_cursor: encodeCursor(lastKey) };
  }

  /**
   * The orders of a listing page read whole, by key (one round trip): the indexes' projections predate the
   * coupon and refund fields, and a deployed index's projection cannot change in place.
   */
  private async whole(items: Item[]): Promise<StoredOrder[]> {
    if (items.length === 0) return [];
    const read = await this.deps.table.getMany(items.map((item) => orderKey(String(item.id))));
    return read.map((item, index) => fromItem(item ?? items[index])!);
  }

  /** Every order, newest first (administrators): every shard read at once and merged. */
  async listAll(limit: number, cursor?: string): Promise<Page<StoredOrder>> {
    const page = await readShards(this.deps.table, this.all, { limit, cursor, order: 'newest-first' });
    return { items: await this.whole(page.items), next_cursor: page.next_cursor };
  }

  /**
   * Orders whose next check is at or before `now`, the most overdue first: one page of the schedule (every
   * shard at once). Eventually consistent: an order settled a moment ago may still appear.
   */
  async dueBy(now: Date, limit: number, cursor?: string): Promise<Page<DueOrder>> {
    const page = await readShards(this.deps.table, this.due, {
      limit,
      cursor,
      order: 'oldest-first',
      // `~` sorts after `#`: an order due at exactly `now` is included.
      to: `${now.toISOString()}~`,
    });
    return { items: page.items.map(dueOrderOf), next_cursor: page.next_cursor };
  }

  /** How many shards the schedule spreads over (a run reads them all at once, each with `dueInShard`). */
  get dueShards(): number {
    return this.due.count;
  }

  /** One shard of the schedule, due by `now`, most overdue first, page by page (lib/billing/reconcile.ts). */
  async *dueInShard(shard: number, now: Date, pageSize: number): AsyncGenerator<DueOrder[]> {
    for await (const page of shardPages(this.deps.table, this.due, shard, {
      pageSize,
      to: `${now.toISOString()}~`,
    }))
      yield page.map(dueOrderOf);
  }

  /**
   * A check found the order unpaid: its next check at `checkAt`, one more check counted. Holds only while
   * the order is pending and still where it was read (another run, or a settlement, moved it: nothing to do;
   * ConditionFailedError).
   */
  async reschedule(order: DueOrder, checkAt: Date, counted: boolean): Promise<void> {
    await this.deps.table.update(orderKey(order.id), {
      UpdateExpression: counted ? 'SET gsi3sk = :next ADD reconcile_checks :one' : 'SET gsi3sk = :next',
      ConditionExpression: '#status = :pending AND gsi3sk = :seen',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':next': dueSortKey(checkAt, order.id),
        ':seen': order.due_key,
        ':pending': 'pending',
        ...(counted ? { ':one': 1 } : {}),
      },
    });
  }

  /**
   * The order leaves the schedule (checks spent, or past its deadline and margin; it reads `expired`), with
   * the checks made counted. Holds only while it is still where it was read.
   */
  async leaveSchedule(order: DueOrder, checks: number): Promise<void> {
    await this.deps.table.update(orderKey(order.id), {
      UpdateExpression: `SET reconcile_checks = :checks ${LEAVE_SCHEDULE}`,
      ConditionExpression: 'gsi3sk = :seen',
      ExpressionAttributeValues: { ':seen': order.due_key, ':checks': checks },
    });
  }

  /** The owner cancels a pending, unexpired order. Throws ConditionFailedError otherwise. */
  async cancel(id: string, userId: string, now: Date): Promise<StoredOrder> {
    const { Key: _key, ...update } = this.cancelItem(id, userId, now).Update!;
    return fromItem(await this.deps.table.update(orderKey(id), update))!;
  }

  /** The cancel as a transaction item (with a coupon's redemption given back in the same transaction). */
  cancelItem(id: string, userId: string, now: Date): TransactItem {
    return {
      Update: {
        Key: orderKey(id),
        UpdateExpression: `SET #status = :cancelled, updated_at = :now ${LEAVE_SCHEDULE}`,
        ConditionExpression: '#status = :pending AND user_id = :user AND deadline_ms > :nowMs',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':cancelled': 'cancelled',
          ':pending': 'pending',
          ':user': userId,
          ':now': isoWithOffset(now),
          ':nowMs': now.getTime(),
        },
      },
    };
  }

  /**
   * Settlement: ONE transaction moving the order from the status it was read in to `paid` (and out of the
   * reconciler's schedule), so of repeated
   * or concurrent confirmations exactly one succeeds (the others get ConditionFailedError). The same
   * transaction writes the `order.paid` event to the outbox (lib/billing/outbox.ts: it must not exist yet)
   * and, with a grant (lib/files), the account's grant (the order keeps a copy): a paid order always has
   * its grant and its event, exactly once, and a failed settlement leaves neither. The grant item failing
   * means the account's grant changed since it was read (another order settled): decide again.
   */
  async settle(order: StoredOrder, input: SettleInput, grant?: GrantWrite): Promise<StoredOrder> {
    const names: Record<string, string> = { '#status': 'status', '#provider': 'provider' };
    const values: Record<string, unknown> = {
      ':paid': 'paid',
      ':expected': input.expectedStatus,
      ':provider': order.provider,
      ':paidAt': input.paidAt,
      ':via': input.via,
    };
    const sets = ['#status = :paid', 'paid_at = :paidAt', 'updated_at = :paidAt', 'paid_via = :via'];
    const conditions = ['#status = :expected', '#provider = :provider'];
    const settled: StoredOrder = {
      ...order,
      status: 'paid',
      paid_at: input.paidAt,
      updated_at: input.paidAt,
      paid_via: input.via,
    };
    if (input.tradeNo) {
      values[':tradeNo'] = input.tradeNo;
      sets.push('trade_no = :tradeNo');
      settled.trade_no = input.tradeNo;
    }
    if (input.lateFrom) {
      values[':late'] = true;
      values[':before'] = input.lateFrom;
      sets.push('late_payment = :late', 'status_before_payment = :before');
      settled.late_payment = true;
      settled.status_before_payment = input.lateFrom;
    }
    if (input.requireUnexpiredAt) {
      values[':nowMs'] = input.requireUnexpiredAt.getTime();
      conditions.push('deadline_ms > :nowMs');
    }
    if (grant) {
      names['#grant'] = 'grant';
      values[':grant'] = grant.grant;
      sets.push('#grant = :grant');
      settled.grant = grant.grant;
    }
    await this.deps.table.transact([
      {
        Update: {
          Key: orderKey(order.id),
          // A paid order leaves the reconciler's schedule in the same write.
          UpdateExpression: `SET ${sets.join(', ')} ${LEAVE_SCHEDULE}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      orderEventOutboxPut(ORDER_PAID, orderPaidDetail(settled), input.now, this.deps.listingShards),
      // The grant, and its entry in the renewal reminders' index of end dates (docs/DESIGN.md 17).
      ...(grant
        ? [
            grant.item,
            renewalItem(order.user_id, grant.grant, this.deps.listingShards),
            planLinkItem(order.user_id, grant.grant, input.now, this.deps.listingShards),
          ]
        : []),
    ]);
    // A transaction returns nothing; the order is what was read plus exactly what the write set.
    return settled;
  }

  /** A second, different channel trade number for a paid order: kept for a human to refund. */
  async recordExtraTradeNo(id: string, tradeNo: string, now: string): Promise<void> {
    await this.deps.table.update(orderKey(id), {
      UpdateExpression:
        'SET extra_trade_nos = list_append(if_not_exists(extra_trade_nos, :empty), :tradeNo), updated_at = :now',
      ConditionExpression: 'NOT contains(extra_trade_nos, :tradeNoText)',
      ExpressionAttributeValues: {
        ':empty': [],
        ':tradeNo': [tradeNo],
        ':tradeNoText': tradeNo,
        ':now': now,
      },
    });
  }
}
