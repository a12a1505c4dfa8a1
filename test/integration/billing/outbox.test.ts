// The order.paid outbox, written by settlement (docs/DESIGN.md 14, docs/PAYMENTS-GUIDE.md "order.paid"): the
// event is an item of the settlement transaction itself, so a paid order has exactly one event and a
// settlement that does not happen leaves none; nothing is published until the drain delivers it.
import { beforeAll, describe, expect, it } from 'vitest';
import type { StoredOrder } from '#lib/billing/model.ts';
import type { OrderPaidDetail } from '#lib/billing/order-events.ts';
import { OrderRepository, orderKey } from '#lib/billing/orders.ts';
import { type OutboxItem, outboxKey } from '#lib/billing/outbox.ts';
import { usageKey } from '#lib/files/usage.ts';
import { config } from '#lib/platform/config/index.ts';
import { OUTBOX_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps, testTable } from '#test/support/deps.ts';
import { buildEpayNotify, epayNotifyFields } from '#test/support/fake-gateways/index.ts';
import { scanTable } from '#test/support/faults.ts';
import { drainOutbox, testDrainHandler } from '#test/support/outbox.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { type Answer, C_KEY, C_PID, call, captureLog, deliverCallback, paidEvents } from './helpers.ts';

const log = captureLog();
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;
let storagePlanId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  // channel_c without api_url: its orders get a signed submit link, no network.
  const saved = await call('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    body: {
      channel_c: { enabled: true, pid: C_PID, key: C_KEY, gateway_url: 'https://pay.example.test/' },
      current_password: admin.password,
    },
  });
  expect(saved.status).toBe(200);
  const [plain, storage] = await Promise.all([
    call('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Plain', amount_cents: 1230 },
    }),
    call('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Storage', amount_cents: 1230, quota_bytes: 70_000, duration_days: 30 },
    }),
  ]);
  planId = plain.json.data.id;
  storagePlanId = storage.json.data.id;
});

async function placeOrder(provider: string, plan = planId, account = buyer): Promise<string> {
  const placed = await call('POST', '/api/v1/orders', {
    headers: account.headers,
    body: { plan_id: plan, provider },
  });
  expect(placed.status).toBe(201);
  return placed.json.data.id as string;
}

const storedOrder = async (id: string) => (await table.get(orderKey(id))) as StoredOrder | undefined;
const outboxItem = async (id: string) => (await table.get(outboxKey(id))) as OutboxItem | undefined;

/** The order.paid log lines (the local publisher's) of one order. */
const eventLines = (orderId: string) =>
  log.filter((line) => line.message === 'event' && (line.detail as OrderPaidDetail)?.order_id === orderId);

/** What consumers read in order.paid, as the paid order says it. */
function detailOf(order: StoredOrder): Partial<OrderPaidDetail> {
  return {
    order_id: order.id,
    user_id: order.user_id,
    plan_id: order.plan_id,
    amount_cents: order.amount_cents,
    currency: 'CNY',
    provider: order.provider,
    trade_no: order.trade_no ?? null,
    paid_at: order.paid_at!,
    late_payment: order.late_payment ?? false,
  };
}

/** A settlement path no HTTP route reaches here (the reconciler's), over the same table. */
function reconciliation() {
  const { settlement } = testDeps({ defaultQuotaBytes: 1_000_000 }).billing;
  const orders = new OrderRepository({ table: testTable(), listingShards: config.listing_shards });
  return async (orderId: string, tradeNo: string) =>
    settlement.confirm((await orders.get(orderId))!, 'reconciliation', tradeNo);
}

function epayNotification(orderId: string, tradeNo: string) {
  return buildEpayNotify({
    key: C_KEY,
    fields: epayNotifyFields({ pid: C_PID, out_trade_no: orderId, money: '12.30', trade_no: tradeNo }),
  });
}

describe('settlement writes order.paid to the outbox', () => {
  it('puts the event beside the paid order, pending, and publishes nothing until the drain delivers it', async () => {
    // Prepare
    const orderId = await placeOrder('mock', storagePlanId);

    // Act
    const paid = await call('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers });
    const published = eventLines(orderId).length;
    const pending = await outboxItem(orderId);
    const events = await paidEvents(log, orderId);
    const delivered = await outboxItem(orderId);

    // Assess
    expect(paid.status).toBe(200);
    expect(published).toBe(0);
    const order = (await storedOrder(orderId))!;
    const grant = (await table.get(usageKey(buyer.account.id)))?.grant as { started_at: string };
    expect(pending).toMatchObject({
      pk: `${OUTBOX_KEY_PREFIX}${orderId}`,
      sk: 'order.paid',
      event: 'order.paid',
      order_id: orderId,
      created_at: order.paid_at,
      detail: {
        ...detailOf(order),
        plan_name: 'Storage',
        grant: { plan_id: storagePlanId, quota_bytes: 70_000, started_at: grant.started_at },
      },
    });
    expect(pending?.detail.grant?.expires_at).toEqual(expect.any(String));
    expect(pending?.delivered_at).toBeUndefined();
    expect(events).toBe(1);
    expect(delivered?.delivered_at).toEqual(expect.any(String));
    expect(eventLines(orderId).map((line) => line.detail)).toEqual([pending?.detail]);
  });

  it('writes no event for a confirmation that is refused, and none when the event cannot be written', async () => {
    // Prepare: a cancelled mock order; and an order whose outbox slot is already taken (a stray item),
    // so only a settlement that writes both in one transaction leaves that order unpaid.
    const cancelled = await placeOrder('mock');
    await call('POST', `/api/v1/orders/${cancelled}/cancel`, { headers: buyer.headers });
    const blocked = await placeOrder('mock', storagePlanId);
    const stray = { ...outboxKey(blocked), stray: true };
    await table.put(stray);

    // Act
    const refused = await call('POST', `/api/v1/orders/${cancelled}/pay`, { headers: buyer.headers });
    const failed = await call('POST', `/api/v1/orders/${blocked}/pay`, { headers: buyer.headers });

    // Assess
    expect(refused.status).toBe(409);
    expect(await outboxItem(cancelled)).toBeUndefined();
    expect(failed.status).toBe(409);
    expect(await storedOrder(blocked)).toMatchObject({ status: 'pending' });
    expect((await storedOrder(blocked))?.grant).toBeUndefined();
    expect((await table.get(usageKey(buyer.account.id)))?.grant).not.toMatchObject({ order_id: blocked });
    expect(await outboxItem(blocked)).toEqual(stray);
    await table.delete(outboxKey(blocked));
    expect(await paidEvents(log, cancelled)).toBe(0);
    expect(await paidEvents(log, blocked)).toBe(0);
  });

  it('concurrent confirmations by every path a provider allows settle each order once, with one event', async () => {
    // Prepare: mock orders (owner), manual orders (administrator; the owner is refused), channel_c
    // orders (signed callbacks racing the reconciler's query result), all confirmed at the same time.
    const reconcile = reconciliation();
    const mock = await Promise.all([placeOrder('mock'), placeOrder('mock', storagePlanId)]);
    const manual = await Promise.all([placeOrder('manual'), placeOrder('manual', storagePlanId)]);
    const channel = await Promise.all([placeOrder('channel_c'), placeOrder('channel_c', storagePlanId)]);
    const untouched = await placeOrder('mock');
    const tries = <T>(count: number, attempt: () => Promise<T>) => Array.from({ length: count }, attempt);

    // Act
    const answers = await Promise.all([
      ...mock.flatMap((id) =>
        tries(6, () => call('POST', `/api/v1/orders/${id}/pay`, { headers: buyer.headers })).map((answer) =>
          answer.then((a) => ({ path: 'owner', id, ok: a.status === 200 })),
        ),
      ),
      ...manual.flatMap((id) => [
        ...tries(6, () => call('POST', `/api/v1/admin/orders/${id}/pay`, { headers: admin.headers })).map(
          (answer) => answer.then((a) => ({ path: 'admin', id, ok: a.status === 200 })),
        ),
        ...tries(2, () => call('POST', `/api/v1/orders/${id}/pay`, { headers: buyer.headers })).map(
          (answer) => answer.then((a: Answer) => ({ path: 'owner-refused', id, ok: a.status === 403 })),
        ),
      ]),
      ...channel.flatMap((id) => [
        ...tries(6, () => deliverCallback('channel_c', epayNotification(id, `T${id}`))).map((answer) =>
          answer.then((a) => ({ path: 'callback', id, ok: a.text === 'success' })),
        ),
        ...tries(3, () => reconcile(id, `T${id}`)).map((answer) =>
          answer.then((result) => ({ path: 'reconciliation', id, ok: result.order.status === 'paid' })),
        ),
      ]),
    ]);

    // Assess: every attempt answered as its path should; each order paid once, with one event that
    // says what the order says; the order nobody paid has none; the drain publishes each event once.
    expect(answers.filter((answer) => !answer.ok)).toEqual([]);
    const settled = [...mock, ...manual, ...channel];
    const items = (await scanTable()).filter((item) => item.pk.startsWith(OUTBOX_KEY_PREFIX));
    for (const id of settled) {
      const order = (await storedOrder(id))!;
      expect(order.status).toBe('paid');
      const mine = items.filter((item) => item.order_id === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.detail).toMatchObject(detailOf(order));
    }
    expect(items.filter((item) => item.order_id === untouched)).toEqual([]);
    const captured: OrderPaidDetail[] = [];
    await drainOutbox(testDrainHandler({ orderPaid: async (detail) => void captured.push(detail) }));
    for (const id of settled) expect(captured.filter((detail) => detail.order_id === id)).toHaveLength(1);
    expect(captured.some((detail) => detail.order_id === untouched)).toBe(false);
  });
});
