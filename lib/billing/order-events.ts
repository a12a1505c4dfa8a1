// The service's outbound events (docs/DESIGN.md 7): `order.paid`, on EventBridge in AWS and as a log line locally.
// Settlement writes the event to the outbox (lib/billing/outbox.ts); the outbox-drain function publishes it.
import { type Grant, grantEndsAt } from '#lib/files/quota-model.ts';
import type { EventBus } from '#lib/platform/events/eventbridge.ts';
import { log } from '#lib/platform/log.ts';
import { orderTerms, type StoredOrder } from './model.ts';

/** What both events say of the order; `order_id` is the idempotency key for consumers. */
interface OrderEventTerms {
  order_id: string;
  user_id: string;
  plan_id: string;
  plan_name: string;
  amount_cents: number;
  currency: 'CNY';
  provider: string;
}

/** What a product needs to grant the purchase. */
export interface OrderPaidDetail extends OrderEventTerms {
  trade_no: string | null;
  paid_at: string;
  /** True when the money arrived after the order was cancelled, expired or failed (needs a human). */
  late_payment: boolean;
  /**
   * The storage grant the account holds after this purchase (docs/DESIGN.md 11), already written in the same
   * transaction that marked the order paid; null when the plan grants no storage.
   */
  grant: OrderGrantDetail | null;
}

export interface OrderGrantDetail {
  plan_id: string;
  plan_name: string;
  quota_bytes: number;
  /** When the current run of the plan began (an extension keeps the earlier start). */
  started_at: string;
  /** null: permanent. */
  expires_at: string | null;
}

/** The event of an order as settlement leaves it (status paid, with the grant it wrote). */
export function orderPaidDetail(order: StoredOrder): OrderPaidDetail {
  return {
    order_id: order.id,
    ...orderTerms(order),
    trade_no: order.trade_no ?? null,
    paid_at: order.paid_at ?? order.updated_at,
    late_payment: order.late_payment ?? false,
    grant: order.grant ? grantDetail(order.grant, grantEndsAt(order.grant)) : null,
  };
}

function grantDetail(
  grant: Omit<OrderGrantDetail, 'expires_at'>,
  expiresAt: string | null,
): OrderGrantDetail {
  return {
    plan_id: grant.plan_id,
    plan_name: grant.plan_name,
    quota_bytes: grant.quota_bytes,
    started_at: grant.started_at,
    expires_at: expiresAt,
  };
}

/**
 * The same detail with its fields in the documented order (docs/PAYMENTS-GUIDE.md), as published: the
 * outbox keeps it as a DynamoDB map, which keeps no order.
 */
export function inDocumentedOrder(detail: OrderPaidDetail): OrderPaidDetail {
  const { grant } = detail;
  return {
    order_id: detail.order_id,
    user_id: detail.user_id,
    plan_id: detail.plan_id,
    plan_name: detail.plan_name,
    amount_cents: detail.amount_cents,
    currency: detail.currency,
    provider: detail.provider,
    trade_no: detail.trade_no,
    paid_at: detail.paid_at,
    late_payment: detail.late_payment,
    grant: grant ? grantDetail(grant, grant.expires_at) : null,
  };
}

/**
 * `order.refunded` (docs/DESIGN.md 17): an order refunded in full; its grant as the refund left it (null: the
 * refund took it all back, or the order granted none).
 */
export interface OrderRefundedDetail extends OrderEventTerms {
  refunded_cents: number;
  refunded_at: string;
  grant: OrderGrantDetail | null;
}

export function orderRefundedDetail(
  order: StoredOrder,
  refundedAt: string,
  grant: Grant | null | undefined,
): OrderRefundedDetail {
  return {
    order_id: order.id,
    ...orderTerms(order),
    refunded_cents: order.amount_cents,
    refunded_at: refundedAt,
    grant: grant ? grantDetail(grant, grantEndsAt(grant)) : null,
  };
}

export interface OrderEventPublisher {
  orderPaid(detail: OrderPaidDetail): Promise<void>;
  /** Publishes `order.refunded`; absent, such an event stays in the outbox (refused) for a publisher that can. */
  orderRefunded?(detail: OrderRefundedDetail): Promise<void>;
  /**
   * Several events in as few calls as the bus allows; the answer says, entry by entry, which were refused
   * (an Error) and which published (undefined). Absent: the drain calls `orderPaid` for each.
   */
  orderPaidBatch?(details: OrderPaidDetail[]): Promise<Array<Error | undefined>>;
}

export const EVENT_SOURCE = 'service.payments';
export const ORDER_PAID = 'order.paid';
export const ORDER_REFUNDED = 'order.refunded';
export type OrderEventName = typeof ORDER_PAID | typeof ORDER_REFUNDED;
/** EventBridge's limit of entries in one PutEvents call; the drain's batches are this size. */
export const PUT_EVENTS_MAX_ENTRIES = 10;

/** Publishes to a bus (EventBridge); a refused entry is an error, so the outbox keeps that event for a retry. */
export function busPublisher(bus: EventBus): OrderEventPublisher {
  const publishOne = (type: OrderEventName) => async (detail: OrderPaidDetail | OrderRefundedDetail) => {
    const [failure] = await bus(EVENT_SOURCE, type, [detail]);
    if (failure) throw failure;
  };
  return {
    orderPaid: publishOne(ORDER_PAID),
    orderRefunded: publishOne(ORDER_REFUNDED),
    async orderPaidBatch(details) {
      const results: Array<Error | undefined> = [];
      for (let from = 0; from < details.length; from += PUT_EVENTS_MAX_ENTRIES) {
        results.push(
          ...(await bus(EVENT_SOURCE, ORDER_PAID, details.slice(from, from + PUT_EVENTS_MAX_ENTRIES))),
        );
      }
      return results;
    },
  };
}

/** Publishes each event, in one call per PUT_EVENTS_MAX_ENTRIES where the publisher can batch. */
export async function publishOrderPaid(
  publisher: OrderEventPublisher,
  details: OrderPaidDetail[],
): Promise<Array<Error | undefined>> {
  if (details.length === 0) return [];
  if (publisher.orderPaidBatch) return publisher.orderPaidBatch(details);
  return Promise.all(
    details.map((detail) =>
      publisher.orderPaid(detail).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      ),
    ),
  );
}

/** The embedded stand-in: one JSON log line per event. */
export const logPublisher: OrderEventPublisher = {
  async orderPaid(detail) {
    log.info('event', { event: ORDER_PAID, source: EVENT_SOURCE, detail });
  },
  async orderRefunded(detail) {
    log.info('event', { event: ORDER_REFUNDED, source: EVENT_SOURCE, detail });
  },
};
