// The outbox drain delivering order.paid to EventBridge (docs/DESIGN.md 14) when the bus fails: records it
// cannot deliver go back as batch item failures and are retried; past the stream's retries the events stay
// pending and the re-drive delivers them; a replayed record or a re-drive racing the stream publishes
// nothing twice. EventBridge, which has no local stand-in, is aws-sdk-client-mock over the real client the
// production wiring builds (a bus named in the settings).
import { randomUUID } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand, type PutEventsCommandInput } from '@aws-sdk/client-eventbridge';
import type { DynamoDBBatchResponse } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildOutboxDrainDeps } from '#functions/outbox-drain/deps.ts';
import { createOutboxDrainHandler } from '#functions/outbox-drain/handler.ts';
import { needs } from '#functions/outbox-drain/needs.ts';
import { LocalStreamPoller } from '#infra/local/outbox-drain.ts';
import { EVENT_SOURCE, ORDER_PAID, type OrderPaidDetail } from '#lib/billing/order-events.ts';
import { type OutboxItem, outboxKey } from '#lib/billing/outbox.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { groupResources } from '#lib/wiring/resources.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';

vi.mock('#lib/platform/observability/metrics.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('#lib/platform/observability/metrics.ts')>()),
  recordMetric: vi.fn(),
}));

const BUS = 'orders';
const bus = mockClient(EventBridgeClient);
/** What reached the bus, and how the bus misbehaves. */
let accepted: Array<{ bus: string; source: string; detailType: string; detail: OrderPaidDetail }>;
/** Calls that fail as a whole (throttled) before any succeeds; Infinity: the bus is down. */
let refusals: number;
/** Orders whose entry the bus refuses (a partial failure) the first time it sees them. */
let refuseOnce: Set<string>;
/** Entries of each PutEvents call, in order. */
let calls: number[];

function fakeBus() {
  bus.reset();
  accepted = [];
  refusals = 0;
  refuseOnce = new Set();
  calls = [];
  bus.on(PutEventsCommand).callsFake(async (input: PutEventsCommandInput) => {
    const entries = input.Entries ?? [];
    calls.push(entries.length);
    if (refusals > 0) {
      refusals -= 1;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
    // Each entry answered in the request's order: an EventId, or an ErrorCode for a refused one.
    const answers = entries.map((entry) => {
      const detail = JSON.parse(entry.Detail!) as OrderPaidDetail;
      if (refuseOnce.delete(detail.order_id)) {
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' };
      }
      accepted.push({
        bus: entry.EventBusName!,
        source: entry.Source!,
        detailType: entry.DetailType!,
        detail,
      });
      return { EventId: randomUUID() };
    });
    return { FailedEntryCount: answers.filter((answer) => 'ErrorCode' in answer).length, Entries: answers };
  });
}

// The drain as deployed: built by its own deps from its needs, with a bus in its settings.
const drain = createOutboxDrainHandler(() => deps);
const deps = buildOutboxDrainDeps(
  groupResources('outbox-drain', needs, { ...config, aws: { ...config.aws, event_bus_name: BUS } }),
);

/** The event source mapping's stand-in; every answer the drain gave is kept. */
function streamOf(options: { retryAttempts: number }) {
  const answers: DynamoDBBatchResponse[] = [];
  const poller = new LocalStreamPoller({
    aws: config.aws,
    tableName: config.table_name,
    retryAttempts: options.retryAttempts,
    retryDelayMs: () => 1,
    invoke: async (event) => {
      const answer = await drain(event as never);
      answers.push(answer as DynamoDBBatchResponse);
      return answer;
    },
  });
  return { poller, answers };
}

let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Outbox plan', amount_cents: 990 },
  });
  planId = plan.json.data.id;
});

beforeEach(() => {
  fakeBus();
  vi.mocked(recordMetric).mockClear();
});

afterAll(() => {
  bus.restore();
});

/** `count` mock orders, each paid by its owner (settlement writes its event to the outbox). */
async function paidOrders(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const placed = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    const paid = await call('POST', `/api/v1/orders/${placed.json.data.id}/pay`, { headers: buyer.headers });
    expect(paid.status).toBe(200);
    ids.push(placed.json.data.id as string);
  }
  return ids;
}

const eventsFor = (orderId: string) => accepted.filter((event) => event.detail.order_id === orderId);
const metricNames = () => vi.mocked(recordMetric).mock.calls.map(([name]) => name);

describe('the outbox drain when EventBridge fails', () => {
  it('publishes a batch in one call; a throttled call and refused entries are retried, each event published once', async () => {
    // Prepare: the first call is throttled; the next refuses the entries of two orders (a partial failure).
    const orders = await paidOrders(4);
    refusals = 1;
    refuseOnce = new Set([orders[1]!, orders[3]!]);
    const { poller, answers } = streamOf({ retryAttempts: 10 });

    // Act
    const summary = await poller.pollOnce();
    poller.close();

    // Assess: one call for the batch, again for it whole, then only the two refused entries (Lambda
    // retries from the first refused record; the one delivered after it is not sent again).
    expect(calls).toEqual([4, 4, 2]);
    expect(answers.map((answer) => answer.batchItemFailures.length)).toEqual([4, 2, 0]);
    expect(summary.givenUp).toBe(0);
    for (const id of orders) {
      expect(eventsFor(id)).toHaveLength(1);
      expect(eventsFor(id)[0]).toMatchObject({
        bus: BUS,
        source: EVENT_SOURCE,
        detailType: ORDER_PAID,
        detail: { order_id: id, provider: 'mock', amount_cents: 990 },
      });
      expect(await table.get(outboxKey(id))).toMatchObject({ delivered_at: expect.any(String) });
    }
    // What the outbox keeps of a refusal is the bus's error code, never its message.
    expect(await table.get(outboxKey(orders[1]!))).toMatchObject({
      attempts: 3,
      last_error: 'InternalFailure',
    });
    expect(accepted).toHaveLength(orders.length);
    // Settlement counts each paid order by provider; the drain counts deliveries, failures and the age.
    expect(vi.mocked(recordMetric).mock.calls.filter(([name]) => name === 'OrdersPaid')).toEqual(
      orders.map(() => ['OrdersPaid', { dimensions: { provider: 'mock' } }]),
    );
    expect(metricNames().filter((name) => name === 'OutboxDeliveryFailed')).toHaveLength(4 + 2);
    expect(metricNames().filter((name) => name === 'OutboxDelivered')).toHaveLength(orders.length);
    expect(vi.mocked(recordMetric)).toHaveBeenCalledWith(
      'OutboxAgeMs',
      expect.objectContaining({ unit: 'Milliseconds', value: expect.any(Number) }),
    );
  });

  it('EventBridge down past the stream retries: nothing lost; once it recovers the re-drive delivers each once', async () => {
    // Prepare: the bus refuses everything while down; the stream's retries run out (the dead-letter case).
    const orders = await paidOrders(3);
    refusals = Number.POSITIVE_INFINITY;
    const { poller } = streamOf({ retryAttempts: 2 });
    const whileDown = await poller.pollOnce();
    const pending = await Promise.all(orders.map((id) => table.get<OutboxItem>(outboxKey(id))));

    // Act: the bus recovers; an operator (or the schedule) re-drives, then the stream replays old records.
    refusals = 0;
    const redriven = await drain({ action: 'redeliver-pending', older_than_minutes: 0 });
    const replay = streamOf({ retryAttempts: 2 });
    await replay.poller.pollOnce();
    const again = await drain({ action: 'redeliver-pending', older_than_minutes: 0 });
    poller.close();
    replay.poller.close();

    // Assess
    expect(whileDown.givenUp).toBe(orders.length);
    for (const item of pending) expect(item).toMatchObject({ attempts: 3, last_error: expect.any(String) });
    for (const item of pending) expect(item?.delivered_at).toBeUndefined();
    expect(redriven).toMatchObject({ delivered: orders.length, failed: 0 });
    for (const id of orders) expect(eventsFor(id)).toHaveLength(1);
    expect(accepted).toHaveLength(orders.length);
    expect(again).toMatchObject({ found: 0, delivered: 0 });
  });

  it('the stream and re-drives racing over the same events publish each once', async () => {
    // Prepare: a slow bus, so deliveries overlap.
    const orders = await paidOrders(3);
    bus.on(PutEventsCommand).callsFake(async (input: PutEventsCommandInput) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      for (const entry of input.Entries ?? []) {
        accepted.push({
          bus: entry.EventBusName!,
          source: entry.Source!,
          detailType: entry.DetailType!,
          detail: JSON.parse(entry.Detail!) as OrderPaidDetail,
        });
      }
      return { FailedEntryCount: 0, Entries: (input.Entries ?? []).map(() => ({ EventId: randomUUID() })) };
    });
    const { poller } = streamOf({ retryAttempts: 10 });

    // Act
    await Promise.all([
      poller.pollOnce(),
      drain({ action: 'redeliver-pending', older_than_minutes: 0 }),
      drain({ action: 'redeliver-pending', older_than_minutes: 0 }),
    ]);
    poller.close();

    // Assess
    for (const id of orders) expect(eventsFor(id)).toHaveLength(1);
    expect(accepted).toHaveLength(orders.length);
  });

  it('a re-drive leaves alone what is younger than asked, and refuses a malformed request', async () => {
    // Prepare: an event the stream has not delivered yet (no drain ran).
    const [orderId] = await paidOrders(1);

    // Act and assess: too young; then malformed requests, refused; then all ages.
    expect(await drain({ action: 'redeliver-pending', older_than_minutes: 15 })).toMatchObject({
      found: 0,
      delivered: 0,
    });
    await expect(drain({ action: 'redeliver-pending', older_than_minutes: -1 })).rejects.toThrow(
      /older_than_minutes/,
    );
    await expect(drain({ action: 'redeliver-pending', limit: 0 })).rejects.toThrow(/limit/);
    await expect(drain({ Records: undefined } as never)).rejects.toThrow(/redeliver-pending/);
    expect(eventsFor(orderId!)).toHaveLength(0);
    expect(await drain({ action: 'redeliver-pending', older_than_minutes: 0 })).toMatchObject({
      found: 1,
      delivered: 1,
    });
    expect(eventsFor(orderId!)).toHaveLength(1);
  });
  it('re-drives pending events ten to a PutEvents call, oldest first across the shards', async () => {
    // Prepare: twelve events the stream has not delivered (no drain ran).
    const orders = await paidOrders(12);

    // Act
    const summary = await drain({ action: 'redeliver-pending', older_than_minutes: 0 });

    // Assess
    expect(summary).toMatchObject({ found: 12, delivered: 12, failed: 0 });
    expect(calls).toEqual([10, 2]);
    expect(accepted.map((event) => event.detail.order_id)).toEqual(orders);
  });
});
