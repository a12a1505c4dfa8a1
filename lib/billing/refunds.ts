// Refunds (docs/DESIGN.md 17): an administrator refunds a paid order in full or in part, once per
// Idempotency-Key. The key's item, the refund on the order and, for a full refund, the order's status, the
// grant taken back and the order.refunded event are one transaction: a retried or concurrent request with
// the same key finds the key's item and answers the order as it is, never refunding twice. A channel's
// refund is asked of it once here; its result completes it (refund-completion.ts).
import { randomUUID } from 'node:crypto';
import type { ChannelAdapter } from '#lib/billing/channels/types.ts';
import { errors } from '#lib/core/errors.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import {
  type Clock,
  ConditionFailedError,
  type Item,
  type Key,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { notifyUrl } from './gateway-settings.ts';
import { effectiveStatus, ORDER_ID_PATTERN, type RefundRecord, type StoredOrder } from './model.ts';
import { type OrderRepository, orderKey } from './orders.ts';
import type { ReconcileSchedule } from './reconcile-schedule.ts';
import { REFUND_ATTEMPTS, type RefundCompletion, refundCheckKey, refundsDue } from './refund-completion.ts';
import type { GatewaySource } from './registry.ts';
import type { ChannelName } from './settings.ts';

/** `Idempotency-Key`: 1 to 64 of letters, digits and `-_.:` (a UUID fits). */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
const refundKeyKey = (key: string): Key => ({ pk: `refundkey#${key}`, sk: 'key' });

/** Refunds recorded by us alone: nothing moves at a channel (manual write-offs and the mock cashier). */
const RECORDED_ONLY = new Set(['manual', 'mock']);

export interface RefundInput {
  amount_cents?: number | undefined;
  reason: string;
}

export interface RefundDeskDeps {
  table: Table;
  orders: OrderRepository;
  listingShards: number;
  clock: Clock;
  /** The channels as enabled now: a channel order is refunded through its channel. */
  gateways: GatewaySource;
  /** `payment.notify_base_url ?? base_url`: where channel_b sends its refund notice. */
  notifyBaseUrl: string;
  /** When a pending channel refund is asked about (the payment reconciliation's schedule and back-off). */
  schedule: ReconcileSchedule;
  /** A refund's result: the grant taken back, the order.refunded event, the buyer's notice. */
  completion: RefundCompletion;
}

export class RefundDesk {
  constructor(private readonly deps: RefundDeskDeps) {}

  /** POST /api/v1/admin/orders/{id}/refund. Answers the order as it is after the refund (or the earlier one). */
  async refund(orderId: string, input: RefundInput, key: string | undefined): Promise<StoredOrder> {
    if (!key) throw errors.badRequest('Idempotency-Key: the header is required');
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw errors.badRequest('Idempotency-Key: 1 to 64 of letters, digits and -_.:');
    }
    if (!ORDER_ID_PATTERN.test(orderId)) throw errors.notFound('Order not found');
    for (let attempt = 0; attempt < REFUND_ATTEMPTS; attempt += 1) {
      // The key's item and the order, read together: the key is almost always new.
      const [keyItem, order] = await Promise.all([
        this.deps.table.get(refundKeyKey(key)),
        this.deps.orders.get(orderId),
      ]);
      if (keyItem) return this.earlierAnswer(keyItem, orderId, input);
      if (!order) throw errors.notFound('Order not found');
      try {
        return await this.refundOnce(order, input, key);
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) {
          // A twin with this key may have refunded between our reads (so nothing is left now): its answer.
          const twin = await this.answerFor(key, orderId, input);
          if (twin) return twin;
          throw error;
        }
        // Another request (this key's twin, or another refund of the order) wrote first: read again.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
      }
    }
    throw errors.conflict('The order is being refunded by other requests; try again');
  }

  /** The order as an earlier request with this key left it; 409 when the key was used for another refund. */
  private async answerFor(key: string, orderId: string, input: RefundInput) {
    const item = await this.deps.table.get(refundKeyKey(key));
    return item ? this.earlierAnswer(item, orderId, input) : undefined;
  }

  /**
   * The answer to a key already used: the order read again (a read beside the key's may predate the refund
   * that wrote the key), or 409 when the key was used for another refund.
   */
  private async earlierAnswer(item: Item, orderId: string, input: RefundInput) {
    const same =
      item.order_id === orderId &&
      item.reason === input.reason &&
      (item.asked_cents ?? null) === (input.amount_cents ?? null);
    if (!same) throw errors.conflict('Idempotency-Key was already used for another refund');
    return (await this.deps.orders.get(orderId))!;
  }

  private async refundOnce(order: StoredOrder, input: RefundInput, key: string): Promise<StoredOrder> {
    const now = this.deps.clock();
    const status = effectiveStatus(order, now);
    if (status === 'refunded') throw errors.badRequest('amount_cents: nothing is left to refund');
    if (status !== 'paid') throw errors.conflict(`Order is ${status}; only a paid order is refunded`);
    const refunded = order.refunded_cents ?? 0;
    const left = order.amount_cents - refunded;
    const amount = input.amount_cents ?? left;
    if (left <= 0) throw errors.badRequest('amount_cents: nothing is left to refund');
    if (amount > left) {
      throw errors.badRequest(`amount_cents: larger than what is left to refund (${left})`, {
        left_cents: left,
      });
    }
    const channel = RECORDED_ONLY.has(order.provider) ? undefined : await this.channelOf(order);
    const at = isoWithOffset(now);
    const refund: RefundRecord = {
      id: randomUUID(),
      amount_cents: amount,
      reason: input.reason,
      // Through a channel: pending until the channel answers (docs/DESIGN.md 17).
      status: channel ? 'pending' : 'succeeded',
      created_at: at,
      key,
    };
    const total = refunded + amount;
    const full = !channel && total === order.amount_cents;
    const count = order.refunds?.length ?? 0;
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {
      ':paid': 'paid',
      ':refund': [refund],
      ':empty': [],
      ':total': total,
      ':at': at,
    };
    const sets = [
      'refunds = list_append(if_not_exists(refunds, :empty), :refund)',
      'refunded_cents = :total',
      'updated_at = :at',
    ];
    if (full) {
      values[':refunded'] = 'refunded';
      sets.push('#status = :refunded', 'refunded_at = :at');
    }
    // The order as read: paid, with exactly the refunds read (so `left` is still what is left).
    values[':count'] = count;
    const unchanged = count === 0 ? 'attribute_not_exists(refunds)' : 'size(refunds) = :count';
    if (count === 0) delete values[':count'];
    const closing = full ? await this.deps.completion.fullRefundItems(order, at, now) : [];
    const after: StoredOrder = {
      ...order,
      refunds: [...(order.refunds ?? []), refund],
      refunded_cents: total,
      updated_at: at,
      ...(full ? { status: 'refunded' as const } : {}),
    };
    await this.deps.table.transact([
      {
        Put: {
          Item: {
            ...refundKeyKey(key),
            order_id: order.id,
            refund_id: refund.id,
            reason: input.reason,
            asked_cents: input.amount_cents ?? null,
            created_at: at,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          Key: orderKey(order.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `#status = :paid AND ${unchanged}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      ...closing,
      // A channel refund is checked at its channel while it is pending (reconciliation).
      ...(channel?.queryRefund ? [this.checkEntry(order, count, refund.id, now)] : []),
    ]);
    if (channel) return this.throughChannel(channel, after, count, refund);
    log.info('order refunded', { order_id: order.id, refund_id: refund.id, amount_cents: amount, full });
    await this.deps.completion.notify(after, amount);
    return after;
  }

  /** A pending channel refund's place on the reconciler's schedule: its first check after `min_age_minutes`. */
  private checkEntry(order: StoredOrder, index: number, refundId: string, now: Date): TransactItem {
    const first = this.deps.schedule.firstCheck(now);
    return {
      Put: {
        Item: {
          ...refundCheckKey(refundId),
          id: order.id,
          provider: order.provider,
          refund_index: index,
          reconcile_checks: 0,
          gsi3pk: shardPartition(refundsDue(this.deps.listingShards), refundId),
          gsi3sk: `${first.toISOString()}#${refundId}`,
        },
      },
    };
  }
  /** The channel that refunds this order: enabled now, at the gateway the order was placed with. */
  private async channelOf(order: StoredOrder): Promise<ChannelAdapter> {
    const { registry } = await this.deps.gateways.current();
    const adapter = registry.channel(order.provider as ChannelName);
    if (!adapter?.refund)
      throw errors.conflict(`${order.provider} is not enabled: its orders cannot be refunded now`);
    if (order.gateway_origin !== adapter.queryOrigin) {
      throw errors.conflict(
        'The channel gateway changed since this order was placed: refund it at the channel',
      );
    }
    return adapter;
  }

  /**
   * The refund is recorded (pending); now the channel is asked once. Its answer completes the refund
   * (`succeeded`, and `refunded` with the grant taken back when it was the last of the amount) or fails it
   * (its amount is left to refund again); no usable answer leaves it pending.
   */
  private async throughChannel(
    adapter: ChannelAdapter,
    order: StoredOrder,
    index: number,
    refund: RefundRecord,
  ): Promise<StoredOrder> {
    const verdict = await adapter.refund!({
      outTradeNo: order.id,
      tradeNo: order.trade_no,
      refundNo: refund.id,
      amountCents: refund.amount_cents,
      totalCents: order.amount_cents,
      reason: refund.reason,
      notifyUrl: notifyUrl(this.deps.notifyBaseUrl, order.provider as ChannelName),
    });
    if (verdict.kind === 'pending' || verdict.kind === 'unknown') {
      if (verdict.kind === 'unknown') {
        log.warn('a channel refund got no usable answer; it stays pending', {
          order_id: order.id,
          refund_id: refund.id,
          provider: order.provider,
          reason: verdict.reason,
        });
      }
      return order;
    }
    return this.deps.completion.complete(
      order.id,
      index,
      refund.id,
      verdict.kind === 'succeeded' ? 'succeeded' : 'failed',
    );
  }
}
