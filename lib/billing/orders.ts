// Order records: creation, listings, and the conditional writes that move an order out of `pending`.

import type { GrantWrite } from '#lib/files/quota-service.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { decodeCursor, encodeCursor, type Item, setFields, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { PaidVia, StoredOrder, StoredStatus } from './model.ts';
import { orderPaidDetail } from './order-events.ts';
import { orderPaidOutboxPut } from './outbox.ts';

export const orderKey = (id: string) => ({ pk: `order#${id}`, sk: 'order' });
const userIndex = (userId: string) => `orders#user#${userId}`;
const ALL_ORDERS = 'orders';

function fromItem(item: Item | undefined): StoredOrder | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, ...order } = item;
  return order as unknown as StoredOrder;
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

export class OrderRepository {
  constructor(private readonly table: Table) {}

  /** `now` orders listings to the millisecond (created_at shows whole seconds). */
  async create(order: StoredOrder, now: Date): Promise<void> {
    const sortKey = `${now.toISOString()}#${order.id}`;
    await this.table.putNew({
      ...orderKey(order.id),
      ...order,
      gsi1pk: userIndex(order.user_id),
      gsi1sk: sortKey,
      gsi2pk: ALL_ORDERS,
      gsi2sk: sortKey,
    });
  }

  async get(id: string): Promise<StoredOrder | undefined> {
    return fromItem(await this.table.get(orderKey(id)));
  }

  /** Newest first. */
  listByUser(userId: string, limit: number, cursor?: string): Promise<Page<StoredOrder>> {
    return this.page('gsi1', userIndex(userId), limit, cursor);
  }

  /** Every order, newest first (administrators). */
  listAll(limit: number, cursor?: string): Promise<Page<StoredOrder>> {
    return this.page('gsi2', ALL_ORDERS, limit, cursor);
  }

  private async page(index: 'gsi1' | 'gsi2', value: string, limit: number, cursor?: string) {
    const startKey = decodeCursor(cursor);
    const { items, lastKey } = await this.table.query({
      IndexName: index === 'gsi1' ? 'owner' : 'listing',
      KeyConditionExpression: '#pk = :value',
      ExpressionAttributeNames: { '#pk': `${index}pk` },
      ExpressionAttributeValues: { ':value': value },
      ScanIndexForward: false,
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    return { items: items.map((item) => fromItem(item)!), next_cursor: encodeCursor(lastKey) };
  }

  /**
   * Pending orders of these providers created in [from, to], oldest first, for reconciliation: a query of
   * the all-orders listing (gsi2) bounded by creation time, never a scan; its cost is the orders created in
   * that window (filtered to pending ones of these providers after reading).
   */
  async *pendingCreatedBetween(
    from: Date,
    to: Date,
    providers: readonly string[],
  ): AsyncGenerator<StoredOrder> {
    if (providers.length === 0) return;
    const names = providers.map((_, index) => `:provider${index}`);
    let startKey: Record<string, unknown> | undefined;
    do {
      const { items, lastKey } = await this.table.query({
        IndexName: 'listing',
        // Sort keys are `<ISO creation time>#<id>`: `~` sorts after `#`, so `to` itself is included.
        KeyConditionExpression: 'gsi2pk = :all AND gsi2sk BETWEEN :from AND :to',
        FilterExpression: `#status = :pending AND #provider IN (${names.join(', ')})`,
        ExpressionAttributeNames: { '#status': 'status', '#provider': 'provider' },
        ExpressionAttributeValues: {
          ':all': ALL_ORDERS,
          ':from': from.toISOString(),
          ':to': `${to.toISOString()}~`,
          ':pending': 'pending',
          ...Object.fromEntries(providers.map((provider, index) => [names[index], provider])),
        },
        ScanIndexForward: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      for (const item of items) yield fromItem(item)!;
      startKey = lastKey;
    } while (startKey);
  }

  /** Stores what the channel answered (QR content, cashier link, its trade number) on a pending order. */
  async attachChannelOrder(
    id: string,
    fields: { qr_code?: string; pay_url?: string; trade_no?: string },
    now: string,
  ): Promise<StoredOrder> {
    // Empty answers are not stored; a trade number a callback already recorded is the authoritative one.
    const answered = Object.fromEntries(Object.entries(fields).filter(([, value]) => value));
    return fromItem(await this.table.update(orderKey(id), setFields(answered, now, ['trade_no'])))!;
  }

  /** The channel could not create its side of the order: it can never be paid through the normal path. */
  async markFailed(id: string, reason: string, now: string): Promise<void> {
    await this.table.update(orderKey(id), {
      UpdateExpression: 'SET #status = :failed, failure_reason = :reason, updated_at = :now',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':failed': 'failed',
        ':pending': 'pending',
        ':reason': reason,
        ':now': now,
      },
    });
  }

  /** The owner cancels a pending, unexpired order. Throws ConditionFailedError otherwise. */
  async cancel(id: string, userId: string, now: Date): Promise<StoredOrder> {
    return fromItem(
      await this.table.update(orderKey(id), {
        UpdateExpression: 'SET #status = :cancelled, updated_at = :now',
        ConditionExpression: '#status = :pending AND user_id = :user AND deadline_ms > :nowMs',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':cancelled': 'cancelled',
          ':pending': 'pending',
          ':user': userId,
          ':now': isoWithOffset(now),
          ':nowMs': now.getTime(),
        },
      }),
    )!;
  }

  /**
   * Settlement: ONE transaction moving the order from the status it was read in to `paid`, so of repeated
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
    await this.table.transact([
      {
        Update: {
          Key: orderKey(order.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      orderPaidOutboxPut(orderPaidDetail(settled), input.now),
      ...(grant ? [grant.item] : []),
    ]);
    // A transaction returns nothing; the order is what was read plus exactly what the write set.
    return settled;
  }

  /** A second, different channel trade number for a paid order: kept for a human to refund. */
  async recordExtraTradeNo(id: string, tradeNo: string, now: string): Promise<void> {
    await this.table.update(orderKey(id), {
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
