// Billing's items written before the listings spread over shards (`npm run migrate:shards`): orders under
// the one `orders` listing partition, pending channel orders not on the reconciler's schedule, and pending
// order.paid events under the one `outbox#pending` partition. Each update holds only while the item is as
// read, so a request changing it meanwhile wins and a second run finds nothing to do.
import type { ItemMigration, ItemUpdate } from '#lib/platform/db/migration.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import type { Item } from '#lib/platform/db/table.ts';
import { ALL_ORDERS, DUE_ORDERS, dueSortKey, orderKey } from './orders.ts';
import { OUTBOX_PENDING } from './outbox.ts';
import { isChannel } from './registry.ts';

/**
 * Pending orders whose deadline passed longer ago than this are left off the schedule: past any margin the
 * settings allow (payment.reconcile.margin_minutes is at most 7 days), the reconciler would only take them off.
 */
const OLDEST_DEADLINE_MS = 7 * 24 * 60 * 60 * 1000;

const isOrder = (item: Item) =>
  typeof item.pk === 'string' && item.pk.startsWith('order#') && item.sk === 'order';

/** An item's listing entry moved from the one partition `from` to its shard of `<from>#<n>`. */
function toShard(item: Item, from: string, listingShards: number, seed: string): ItemUpdate {
  return {
    Key: { pk: String(item.pk), sk: String(item.sk) },
    UpdateExpression: 'SET gsi2pk = :shard',
    ConditionExpression: 'gsi2pk = :old',
    ExpressionAttributeValues: {
      ':shard': shardPartition({ name: from, count: listingShards }, seed),
      ':old': from,
    },
  };
}

const orderListing: ItemMigration = {
  name: 'billing: all-orders listing shards',
  plan(item, { listingShards }) {
    if (!isOrder(item) || item.gsi2pk !== ALL_ORDERS || typeof item.id !== 'string') return undefined;
    return toShard(item, ALL_ORDERS, listingShards, item.id);
  },
};

const reconcileSchedule: ItemMigration = {
  name: 'billing: reconciliation schedule',
  plan(item, { listingShards }) {
    if (!isOrder(item) || item.status !== 'pending' || item.gsi3pk !== undefined) return undefined;
    const { id, provider, deadline_ms: deadline } = item;
    if (typeof id !== 'string' || typeof provider !== 'string' || !isChannel(provider)) return undefined;
    if (typeof deadline !== 'number' || deadline < Date.now() - OLDEST_DEADLINE_MS) return undefined;
    // Due since it was placed: the next run asks about it, then it follows the schedule (or leaves it
    // at once when past its deadline and margin).
    const placed = typeof item.created_at === 'string' ? new Date(item.created_at) : new Date(0);
    return {
      Key: orderKey(id),
      UpdateExpression:
        'SET gsi3pk = :shard, gsi3sk = :due, reconcile_checks = if_not_exists(reconcile_checks, :zero)',
      ConditionExpression: '#status = :pending AND attribute_not_exists(gsi3pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':shard': shardPartition({ name: DUE_ORDERS, count: listingShards }, id),
        ':due': dueSortKey(Number.isNaN(placed.getTime()) ? new Date(0) : placed, id),
        ':zero': 0,
        ':pending': 'pending',
      },
    };
  },
};

const outboxPending: ItemMigration = {
  name: 'billing: pending order.paid shards',
  plan(item, { listingShards }) {
    if (item.gsi2pk !== OUTBOX_PENDING || typeof item.order_id !== 'string') return undefined;
    return toShard(item, OUTBOX_PENDING, listingShards, item.order_id);
  },
};

export const billingMigrations: ItemMigration[] = [orderListing, reconcileSchedule, outboxPending];
