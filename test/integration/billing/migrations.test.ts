// Billing's items of the key shape before shards (lib/billing/migrations.ts): written raw as the old code
// wrote them, brought to the current shape by each migration's conditional update (applied here with the
// document client, as `npm run migrate:shards` applies them), then read through the current code: the
// administrators' listing, the reconciler's schedule and the outbox re-drive.

import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { billingMigrations } from '#lib/billing/migrations.ts';
import { newOrderId } from '#lib/billing/model.ts';
import type { OrderPaidDetail } from '#lib/billing/order-events.ts';
import { OrderRepository, orderKey } from '#lib/billing/orders.ts';
import { outboxKey } from '#lib/billing/outbox.ts';
import { config } from '#lib/platform/config/index.ts';
import type { ItemUpdate } from '#lib/platform/db/migration.ts';
import type { Item, Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDrainHandler } from '#test/support/outbox.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call, captureLog } from './helpers.ts';

captureLog();
const SHARDS = { listingShards: config.listing_shards };
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
});

/** An order item exactly as the code before shards wrote it (one `orders` partition, no schedule). */
async function oldOrder(provider: string, status: string, placed: Date): Promise<string> {
  const id = newOrderId(placed);
  const sortKey = `${placed.toISOString()}#${id}`;
  await table.put({
    ...orderKey(id),
    id,
    user_id: buyer.account.id,
    plan_id: 'plan-old',
    plan_name: 'Old plan',
    amount_cents: 500,
    currency: 'CNY',
    provider,
    status,
    created_at: `${placed.toISOString().slice(0, 19)}+00:00`,
    updated_at: `${placed.toISOString().slice(0, 19)}+00:00`,
    deadline_ms: placed.getTime() + 30 * 60_000,
    gsi1pk: `orders#user#${buyer.account.id}`,
    gsi1sk: sortKey,
    gsi2pk: 'orders',
    gsi2sk: sortKey,
  });
  return id;
}

/** A pending order.paid event as the code before shards wrote it (one `outbox#pending` partition). */
async function oldPendingEvent(orderId: string, written: Date): Promise<void> {
  const detail: OrderPaidDetail = {
    order_id: orderId,
    user_id: buyer.account.id,
    plan_id: 'plan-old',
    plan_name: 'Old plan',
    amount_cents: 500,
    currency: 'CNY',
    provider: 'manual',
    trade_no: null,
    paid_at: `${written.toISOString().slice(0, 19)}+00:00`,
    late_payment: false,
    grant: null,
  };
  await table.put({
    ...outboxKey(orderId),
    event: 'order.paid',
    order_id: orderId,
    detail: detail as unknown as Item,
    created_at: detail.paid_at,
    created_ms: written.getTime(),
    gsi2pk: 'outbox#pending',
    gsi2sk: `${written.toISOString()}#${orderId}`,
  });
}

/** Every migration's update for the item as stored now, applied as the script applies them. */
async function migrate(key: { pk: string; sk: string }): Promise<string[]> {
  const item = (await table.get(key, { includeExpired: true }))!;
  const applied: string[] = [];
  for (const migration of billingMigrations) {
    const planned = migration.plan(item, SHARDS);
    if (!planned) continue;
    for (const update of [planned].flat()) {
      await table.client.send(new UpdateCommand({ TableName: table.name, ...update }));
    }
    applied.push(migration.name);
  }
  return applied;
}

describe('billing migrations', () => {
  it('moves an old order into its listing shard and a pending channel order onto the schedule', async () => {
    // Prepare
    const placed = new Date(Date.now() - 10 * 60_000);
    const channelOrder = await oldOrder('channel_b', 'pending', placed);
    const paidMock = await oldOrder('mock', 'paid', new Date(placed.getTime() + 1000));

    // Act
    const appliedChannel = await migrate(orderKey(channelOrder));
    const appliedMock = await migrate(orderKey(paidMock));
    const again = [...(await migrate(orderKey(channelOrder))), ...(await migrate(orderKey(paidMock)))];

    // Assess: the admin listing (every shard merged) shows both, newest first; the channel order is due.
    expect(appliedChannel).toEqual([
      'billing: all-orders listing shards',
      'billing: reconciliation schedule',
    ]);
    expect(appliedMock).toEqual(['billing: all-orders listing shards']);
    expect(again).toEqual([]);
    const listed = await call('GET', '/api/v1/admin/orders?limit=100', { headers: admin.headers });
    const ids = listed.json.data.items.map((order: { id: string }) => order.id);
    expect(ids.indexOf(paidMock)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(channelOrder)).toBe(ids.indexOf(paidMock) + 1);
    const orders = new OrderRepository({ table, ...SHARDS });
    const due = await orders.dueBy(new Date(), 100);
    expect(due.items.map((order) => order.id)).toContain(channelOrder);
    expect(due.items.map((order) => order.id)).not.toContain(paidMock);
    expect(due.items.find((order) => order.id === channelOrder)).toMatchObject({
      provider: 'channel_b',
      reconcile_checks: 0,
    });
  });

  it('leaves alone an order a request changed after the migration read it', async () => {
    // Prepare: read in the old shape; the owner cancels before the update lands.
    const id = await oldOrder('channel_a', 'pending', new Date(Date.now() - 60_000));
    const read = (await table.get(orderKey(id)))!;
    await call('POST', `/api/v1/orders/${id}/cancel`, { headers: buyer.headers });
    const schedule = billingMigrations.find((migration) => migration.name.includes('schedule'))!;

    // Act
    const update = schedule.plan(read, SHARDS) as ItemUpdate;
    const written = table.client.send(new UpdateCommand({ TableName: table.name, ...update }));

    // Assess
    await expect(written).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await table.get(orderKey(id)))?.gsi3pk).toBeUndefined();
  });

  it('moves an old pending order.paid into its shard, where the re-drive delivers it once', async () => {
    // Prepare
    const orderId = newOrderId(new Date());
    await oldPendingEvent(orderId, new Date(Date.now() - 60 * 60_000));
    const published: OrderPaidDetail[] = [];
    const drain = testDrainHandler({ orderPaid: async (detail) => void published.push(detail) });

    // Act
    const applied = await migrate(outboxKey(orderId));
    const first = await drain({ action: 'redeliver-pending', older_than_minutes: 15 });
    const second = await drain({ action: 'redeliver-pending', older_than_minutes: 15 });

    // Assess
    expect(applied).toEqual(['billing: pending order.paid shards']);
    expect(first).toMatchObject({ delivered: 1, failed: 0 });
    expect(second).toMatchObject({ found: 0 });
    expect(published.map((detail) => detail.order_id)).toEqual([orderId]);
  });
});
