// The service's outbound events (docs/DESIGN.md 7): `order.paid`, on EventBridge in AWS and as a log line locally.
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { log } from '../log.ts';

/** What a product needs to grant the purchase; `order_id` is the idempotency key for consumers. */
export interface OrderPaidDetail {
  order_id: string;
  user_id: string;
  plan_id: string;
  plan_name: string;
  amount_cents: number;
  currency: 'CNY';
  provider: string;
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

export interface OrderEventPublisher {
  orderPaid(detail: OrderPaidDetail): Promise<void>;
}

export const EVENT_SOURCE = 'service.payments';
export const ORDER_PAID = 'order.paid';

/** Publishes to an EventBridge bus; a rejected entry is an error, so the caller can retry later. */
export function eventBridgePublisher(client: EventBridgeClient, busName: string): OrderEventPublisher {
  return {
    async orderPaid(detail) {
      const answer = await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: EVENT_SOURCE,
              DetailType: ORDER_PAID,
              Detail: JSON.stringify(detail),
            },
          ],
        }),
      );
      if ((answer.FailedEntryCount ?? 0) > 0) {
        const code = answer.Entries?.[0]?.ErrorCode ?? 'unknown';
        throw new Error(`EventBridge refused the ${ORDER_PAID} event (${code})`);
      }
    },
  };
}

/** The embedded stand-in: one JSON log line per event. */
export const logPublisher: OrderEventPublisher = {
  async orderPaid(detail) {
    log.info('event', { event: ORDER_PAID, source: EVENT_SOURCE, detail });
  },
};
