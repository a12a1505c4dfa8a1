// The order.paid outbox (docs/DESIGN.md 14, docs/PAYMENTS-GUIDE.md "order.paid"). Settlement writes the
// event as an item of its own transaction, so a paid order always has its event and an unpaid one never
// does; the outbox-drain function, fed by the table's stream (INSERT of a `OUTBOX#` key), publishes it and
// marks it delivered. Delivery is at least once: consumers de-duplicate by `order_id`.
import { randomUUID } from 'node:crypto';
import { OUTBOX_KEY_PREFIX, TABLE } from '#lib/platform/db/keys.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import {
  type Clock,
  ConditionFailedError,
  epochSeconds,
  type Key,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import {
  inDocumentedOrder,
  ORDER_PAID,
  ORDER_REFUNDED,
  type OrderEventName,
  type OrderEventPublisher,
  type OrderPaidDetail,
  type OrderRefundedDetail,
  PUT_EVENTS_MAX_ENTRIES,
  publishOrderPaid,
} from './order-events.ts';

export const outboxKey = (orderId: string, event: OrderEventName = ORDER_PAID): Key => ({
  pk: `${OUTBOX_KEY_PREFIX}${orderId}`,
  sk: event,
});

/**
 * Events not yet delivered are listed in the listing index under `outbox#pending#<n>` (n from the order id,
 * over `listing_shards` shards: settlements at any rate spread over them), oldest first; delivery removes
 * the entry (a sparse index), so the list is exactly what a re-drive has to deliver.
 */
export const OUTBOX_PENDING = 'outbox#pending';
const pendingListing = (listingShards: number): ShardedListing => ({
  index: 'listing',
  name: OUTBOX_PENDING,
  count: listingShards,
});
/** A drain holds an event this long while publishing; one that died mid-delivery frees it by expiring. */
export const CLAIM_LEASE_MS = 60_000;
/** Delivered events stay this long (for an operator to look at), then the table's TTL removes them. */
export const DELIVERED_RETENTION_DAYS = 7;
const DAY_MS = 86_400_000;

/** One outbox item as stored. */
export type OutboxItem = Key & {
  event: OrderEventName;
  order_id: string;
  detail: OrderPaidDetail | OrderRefundedDetail;
  created_at: string;
  /** Epoch milliseconds of `created_at`: the age metric needs more than whole seconds. */
  created_ms: number;
  /** Delivery tries so far (each claim counts one). */
  attempts?: number;
  claim_id?: string;
  claimed_until_ms?: number;
  delivered_at?: string;
  last_error?: string;
};

/** Is this key an outbox event's (what the stream's filter lets through to the drain)? */
export function isOutboxKey(key: { pk?: unknown; sk?: unknown }): key is Key {
  return (
    typeof key.pk === 'string' &&
    key.pk.startsWith(OUTBOX_KEY_PREFIX) &&
    (key.sk === ORDER_PAID || key.sk === ORDER_REFUNDED)
  );
}

/**
 * The transaction item that records an order's event: `order.paid` for a settled order, `order.refunded` for
 * one refunded in full (docs/DESIGN.md 17). It must not exist yet, so the settlement or the full refund
 * that writes it is the only one (a second would fail the whole transaction).
 */
export function orderEventOutboxPut(
  event: OrderEventName,
  detail: OutboxItem['detail'],
  now: Date,
  listingShards: number,
): TransactItem {
  const pending = pendingSortKey(now, detail.order_id);
  const item: OutboxItem & { gsi2pk: string; gsi2sk: string } = {
    ...outboxKey(detail.order_id, event),
    event,
    order_id: detail.order_id,
    detail,
    created_at: isoWithOffset(now),
    created_ms: now.getTime(),
    gsi2pk: shardPartition(pendingListing(listingShards), detail.order_id),
    gsi2sk: event === ORDER_REFUNDED ? `${pending}#refunded` : pending,
  };
  return { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } };
}

/** An event's place in the pending listing: when it was written, then its order. */
export const pendingSortKey = (writtenAt: Date, orderId: string) => `${writtenAt.toISOString()}#${orderId}`;

/**
 * What became of one delivery: `delivered` (published now), `already-delivered` (a replayed record or a
 * re-drive racing the stream: nothing published), `gone` (no such item), `busy` (another drain holds it
 * now: try again later) or `failed` (the bus refused it or could not be reached: it stays pending).
 */
export type DeliveryOutcome = 'delivered' | 'already-delivered' | 'gone' | 'busy' | 'failed';

export interface RedeliverySummary {
  found: number;
  delivered: number;
  already_delivered: number;
  busy: number;
  failed: number;
}

export interface OutboxDeliveryDeps {
  table: Table;
  publisher: OrderEventPublisher;
  /** `listing_shards`: the pending listing's shards (as settlement wrote them). */
  listingShards: number;
}

export class OutboxDelivery {
  private readonly table: Table;
  private readonly clock: Clock;

  constructor(private readonly deps: OutboxDeliveryDeps) {
    this.table = deps.table;
    this.clock = deps.table.clock;
  }

  /**
   * Publishes the event under `key` unless it was delivered already (deliverMany of one); a failed publish
   * throws, and the event stays pending for the next try.
   */
  async deliver(key: Key): Promise<Exclude<DeliveryOutcome, 'failed'>> {
    const [result] = await this.deliverMany([key]);
    if (result!.outcome === 'failed') throw result!.error;
    return result!.outcome;
  }

  /**
   * Publishes the events under `keys` that are not delivered yet, in one PutEvents call per ten: claims each
   * (one conditional write, so the stream and a re-drive never publish one side by side), publishes the
   * claimed ones together, then marks each the bus accepted delivered and frees each it refused (`failed`,
   * with its error; it stays pending for the next try). An accepted event is marked whatever became of the
   * others, so a retry of the batch publishes only the refused ones again. Answers in the order of `keys`.
   */
  async deliverMany(keys: Key[]): Promise<Array<{ outcome: DeliveryOutcome; error?: Error }>> {
    const claimId = randomUUID();
    const claims = await Promise.all(
      keys.map((key) => this.claim(key, claimId).catch((error: unknown) => asError(error))),
    );
    const results: Array<{ outcome: DeliveryOutcome; error?: Error }> = claims.map((claim) =>
      claim instanceof Error
        ? { outcome: 'failed', error: claim }
        : typeof claim === 'string'
          ? { outcome: claim }
          : { outcome: 'delivered' },
    );
    const claimed = claims.flatMap((claim, index) =>
      claim instanceof Error || typeof claim === 'string' ? [] : [{ index, item: claim }],
    );
    const failures = await this.publish(claimed.map(({ item }) => item));
    const now = this.clock();
    await Promise.all(
      claimed.map(async ({ index, item }, position) => {
        const key = keys[index]!;
        const failure = failures[position];
        if (failure) {
          recordMetric('OutboxDeliveryFailed');
          results[index] = { outcome: 'failed', error: failure };
          await this.release(key, claimId, failure);
          return;
        }
        recordMetric('OutboxDelivered');
        recordMetric('OutboxAgeMs', {
          value: Math.max(0, now.getTime() - item.created_ms),
          unit: 'Milliseconds',
        });
        await this.markDelivered(key, now).catch((error: unknown) => {
          // The event is on the bus; at worst a later re-drive publishes it again (consumers de-duplicate).
          log.error('order.paid was published but could not be marked delivered', {
            order_id: item.order_id,
            error,
          });
        });
      }),
    );
    return results;
  }

  /** Publishes the claimed items, order.paid ones in batches; answers in their order. */
  private async publish(items: OutboxItem[]): Promise<Array<Error | undefined>> {
    const failures: Array<Error | undefined> = new Array(items.length).fill(undefined);
    const paid = items.flatMap((item, index) => (item.event === ORDER_REFUNDED ? [] : [index]));
    const paidFailures = await publishOrderPaid(
      this.deps.publisher,
      paid.map((index) => inDocumentedOrder(items[index]!.detail as OrderPaidDetail)),
    );
    paid.forEach((index, position) => {
      failures[index] = paidFailures[position];
    });
    await Promise.all(
      items.map(async (item, index) => {
        if (item.event !== ORDER_REFUNDED) return;
        const { publisher } = this.deps;
        if (!publisher.orderRefunded) {
          failures[index] = new Error('this publisher cannot publish order.refunded');
          return;
        }
        await publisher.orderRefunded(item.detail as OrderRefundedDetail).catch((error: unknown) => {
          failures[index] = asError(error);
        });
      }),
    );
    return failures;
  }

  /**
   * Delivers every event still pending that was written more than `olderThanMs` ago (the re-drive: events
   * the stream could not deliver, whose stream records may be gone), oldest first across the shards, at most
   * `limit`, ten to a PutEvents call. One event failing does not stop the others.
   */
  async redeliverPending(options: { olderThanMs: number; limit?: number }): Promise<RedeliverySummary> {
    const limit = options.limit ?? 1000;
    const before = new Date(this.clock().getTime() - options.olderThanMs).toISOString();
    const summary: RedeliverySummary = { found: 0, delivered: 0, already_delivered: 0, busy: 0, failed: 0 };
    const listing = pendingListing(this.deps.listingShards);
    let cursor: string | undefined;
    do {
      // Sort keys are `<ISO time>#<order id>`, so `to: before` takes exactly the events written before it.
      const page = await readShards<OutboxItem>(this.table, listing, {
        limit: Math.min(PUT_EVENTS_MAX_ENTRIES, limit - summary.found),
        cursor,
        order: 'oldest-first',
        to: before,
      });
      summary.found += page.items.length;
      const results = await this.deliverMany(page.items.map((item) => ({ pk: item.pk, sk: item.sk })));
      results.forEach(({ outcome, error }, index) => {
        if (outcome === 'delivered') summary.delivered += 1;
        else if (outcome === 'busy') summary.busy += 1;
        else if (outcome === 'failed') {
          summary.failed += 1;
          log.error('order.paid could not be re-delivered; it stays pending', {
            order_id: page.items[index]?.order_id,
            error,
          });
        } else summary.already_delivered += 1;
      });
      cursor = page.next_cursor ?? undefined;
    } while (cursor && summary.found < limit);
    return summary;
  }

  /** The item, claimed for this delivery; or why there is nothing to publish. */
  private async claim(
    key: Key,
    claimId: string,
  ): Promise<OutboxItem | Exclude<DeliveryOutcome, 'delivered'>> {
    const nowMs = this.clock().getTime();
    try {
      return await this.table.update<OutboxItem>(key, {
        UpdateExpression: 'SET claim_id = :claim, claimed_until_ms = :until ADD attempts :one',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(delivered_at) AND ' +
          '(attribute_not_exists(claimed_until_ms) OR claimed_until_ms < :now)',
        ExpressionAttributeValues: {
          ':claim': claimId,
          ':until': nowMs + CLAIM_LEASE_MS,
          ':now': nowMs,
          ':one': 1,
        },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
    const current = await this.table.get<OutboxItem>(key, { includeExpired: true });
    if (!current) return 'gone';
    return current.delivered_at ? 'already-delivered' : 'busy';
  }

  /** Frees the claim after a failed publish, so the retry need not wait for the lease (ours only). */
  private async release(key: Key, claimId: string, cause: unknown): Promise<void> {
    await this.table
      .update(key, {
        UpdateExpression: 'SET last_error = :error REMOVE claim_id, claimed_until_ms',
        ConditionExpression: 'claim_id = :claim',
        ExpressionAttributeValues: { ':claim': claimId, ':error': errorName(cause) },
      })
      .catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) {
          log.warn('an outbox claim could not be freed; it lapses by itself', { key: key.pk, error });
        }
      });
  }

  private async markDelivered(key: Key, now: Date): Promise<void> {
    await this.table
      .update(key, {
        UpdateExpression:
          'SET delivered_at = :at, #expires = :expires REMOVE claim_id, claimed_until_ms, gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#expires': TABLE.ttlAttribute },
        ExpressionAttributeValues: {
          ':at': isoWithOffset(now),
          ':expires': epochSeconds(new Date(now.getTime() + DELIVERED_RETENTION_DAYS * DAY_MS)),
        },
      })
      .catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
      });
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** What is kept of a publishing failure: its kind only (a message might carry more than it should). */
function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}
