// Payment reconciliation per channel (docs/PAYMENTS-GUIDE.md, "Reconciliation"): a pending order whose
// callback never came is asked about at its fake gateway (alipay.trade.query, WeChat Pay's query by
// out_trade_no, EPay's api.php?act=order) and settled only on a verified answer that passes a callback's
// checks; a channel that cannot answer changes nothing (a warning and a metric) and the next run settles it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StoredOrder } from '#lib/billing/model.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import type { QueryMode } from '#test/support/fake-gateways/index.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { C_KEY, call, captureLog } from './helpers.ts';
import {
  CHANNELS,
  type Channel,
  type ChannelHarness,
  createPlan,
  grantOf,
  placeOrder,
  reconcilerAhead,
  startChannels,
  storedOrder,
  TRADE_NO,
} from './reconcile-support.ts';

// The metrics entry point is watched, not replaced in behaviour: every call is recorded for assertions.
vi.mock('#lib/platform/observability/metrics.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/platform/observability/metrics.ts')>();
  return { ...original, recordMetric: vi.fn(original.recordMetric) };
});

const log = captureLog();
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;
let channels: ChannelHarness;
/** Orders a test placed: cancelled afterwards if still pending, so each run sees only its test's orders. */
const placed: string[] = [];

// Defaults: first check 3 minutes after the order is placed, then waits of 6, 12, 24... minutes; order
// TTL 30 + margin 60 minutes. A reconciler 5 minutes ahead finds an order placed now due; 1 minute ahead,
// not yet; after a check at +5 the next is due at +11 (AFTER_BACKOFF); past +90 its checks are over.
const IN_WINDOW = 5;
const TOO_YOUNG = 1;
const AFTER_BACKOFF = IN_WINDOW + 6;
const PAST_ITS_END = 30 + 60 + 2;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  channels = await startChannels(admin);
  planId = await createPlan(admin, 'Storage month');
});

afterEach(async () => {
  for (const id of placed.splice(0)) {
    if ((await storedOrder(table, id))?.status === 'pending') {
      await call('POST', `/api/v1/orders/${id}/cancel`, { headers: buyer.headers });
    }
  }
  vi.mocked(recordMetric).mockClear();
  log.length = 0;
});

afterAll(async () => {
  await channels?.close();
});

async function order(channel: Channel, mode?: QueryMode): Promise<string> {
  const id = await placeOrder(buyer, planId, channel);
  placed.push(id);
  if (mode) channels.queries(channel).set(id, mode);
  return id;
}

function metricCalls(name: string) {
  return vi
    .mocked(recordMetric)
    .mock.calls.filter(([called]) => called === name)
    .map(([, options]) => options?.dimensions);
}

/**
 * No state change but the order's next check: the item as it was (status, payment fields, grant) apart from
 * its place in the reconciler's schedule, and no grant on the account.
 */
async function expectUntouched(id: string, before: StoredOrder | undefined): Promise<void> {
  expect(withoutSchedule(await storedOrder(table, id))).toEqual(withoutSchedule(before));
  expect((await grantOf(table, buyer.account.id))?.order_id).not.toBe(id);
}

function withoutSchedule(order: StoredOrder | undefined) {
  const {
    gsi3pk: _shard,
    gsi3sk: _due,
    reconcile_checks: _checks,
    ...rest
  } = (order ?? {}) as Record<string, unknown>;
  return rest;
}

/** The order's place in the reconciler's schedule: its next check and the checks made so far. */
async function scheduleOf(id: string) {
  const item = (await storedOrder(table, id)) as unknown as Record<string, unknown>;
  return {
    next_check: typeof item.gsi3sk === 'string' ? item.gsi3sk.split('#')[0] : undefined,
    checks: item.reconcile_checks,
  };
}

const minutesAhead = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

describe.each(CHANNELS)('%s reconciliation', (channel) => {
  it('settles a pending order the channel reports paid, with paid_via reconciliation and its grant', async () => {
    // Prepare
    const id = await order(channel, 'paid');

    // Act
    const summary = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(summary).toMatchObject({ checked: 1, settled: 1, still_pending: 0, failed: 0 });
    expect(summary.providers[channel]).toMatchObject({ checked: 1, settled: 1 });
    const stored = await storedOrder(table, id);
    expect(stored).toMatchObject({ status: 'paid', paid_via: 'reconciliation', trade_no: TRADE_NO[channel] });
    expect(stored?.late_payment).toBeUndefined();
    const grant = await grantOf(table, buyer.account.id);
    expect(grant).toMatchObject({ order_id: id, plan_id: planId });
    expect(stored?.grant).toEqual(grant);
    expect(metricCalls('ReconcileChecked')).toEqual([{ provider: channel }]);
    expect(metricCalls('ReconcileSettled')).toEqual([{ provider: channel }]);
    expect(metricCalls('ReconcileQueryFailed')).toEqual([]);
    const read = await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers });
    expect(read.json.data).toMatchObject({ status: 'paid', trade_no: TRADE_NO[channel] });
  });

  it('asks no more about an order once it is paid', async () => {
    // Prepare
    const id = await order(channel, 'paid');
    await reconcilerAhead(IN_WINDOW)();
    const asked = channels.queries(channel).timesQueried(id);

    // Act
    const summary = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(asked).toBe(1);
    expect(summary.checked).toBe(0);
    expect(channels.queries(channel).timesQueried(id)).toBe(1);
  });

  it.each(['not_paid', 'unknown_order'] as const)(
    'leaves an order pending when the channel answers %s',
    async (mode) => {
      // Prepare
      const id = await order(channel, mode);
      const before = await storedOrder(table, id);

      // Act
      const summary = await reconcilerAhead(IN_WINDOW)();

      // Assess
      expect(summary).toMatchObject({ checked: 1, settled: 0, still_pending: 1, failed: 0 });
      await expectUntouched(id, before);
      expect(channels.queries(channel).timesQueried(id)).toBe(1);
      expect(metricCalls('ReconcileQueryFailed')).toEqual([]);
      // Asked again after twice the first wait, not on the next run.
      const schedule = await scheduleOf(id);
      expect(schedule.checks).toBe(1);
      expect(schedule.next_check! > minutesAhead(IN_WINDOW + 5)).toBe(true);
      expect(schedule.next_check! < minutesAhead(AFTER_BACKOFF)).toBe(true);
      expect((await reconcilerAhead(IN_WINDOW)()).checked).toBe(0);
    },
  );

  const faults: Array<[QueryMode, string]> = [
    ['down', 'http_status'],
    ['unreachable', 'unreachable'],
    ['garbage', 'malformed'],
    // EPay V1 signs no query answer (docs/PAYMENTS-GUIDE.md), so there is no signature to get wrong.
    ...(channel === 'channel_c' ? [] : [['wrong_signature', 'signature'] as [QueryMode, string]]),
  ];
  it.each(faults)(
    'changes nothing when the query is %s (warning, metric), and the next run settles it',
    async (mode, reason) => {
      // Prepare
      const id = await order(channel, mode);
      const before = await storedOrder(table, id);

      // Act
      const failedRun = await reconcilerAhead(IN_WINDOW)();

      // Assess
      expect(failedRun).toMatchObject({ checked: 1, settled: 0, still_pending: 0, failed: 1 });
      await expectUntouched(id, before);
      const warnings = log.filter((line) => line.message === 'payment reconciliation query failed');
      expect(warnings).toEqual([
        expect.objectContaining({ level: 'warn', order_id: id, provider: channel, reason }),
      ]);
      // Never the merchant key (channel_c's travels in the query URL) nor an answer's signature.
      expect(JSON.stringify(warnings)).not.toContain(C_KEY);
      expect(JSON.stringify(warnings)).not.toMatch(/"sign"|<html>|Wechatpay-Signature/i);
      expect(metricCalls('ReconcileQueryFailed')).toEqual([{ provider: channel, reason }]);

      // Act: the channel recovers; a run once the order's next check is due
      channels.queries(channel).set(id, 'paid');
      const nextRun = await reconcilerAhead(AFTER_BACKOFF)();

      // Assess
      expect(nextRun).toMatchObject({ checked: 1, settled: 1, failed: 0 });
      expect(await storedOrder(table, id)).toMatchObject({ status: 'paid', paid_via: 'reconciliation' });
    },
  );

  it.each([
    ['wrong_amount', 'amount_mismatch'],
    ['other_merchant', 'merchant'],
  ] as const)('refuses a paid answer with the %s (no settlement, warning, metric)', async (mode, reason) => {
    // Prepare
    const id = await order(channel, mode);
    const before = await storedOrder(table, id);

    // Act
    const summary = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(summary).toMatchObject({ checked: 1, settled: 0, failed: 1 });
    await expectUntouched(id, before);
    expect(metricCalls('ReconcileQueryFailed')).toEqual([{ provider: channel, reason }]);
    expect(log).toContainEqual(
      expect.objectContaining({ message: 'payment reconciliation query failed', order_id: id, reason }),
    );
    if (mode === 'wrong_amount') {
      // The same alarm a callback with another amount raises.
      expect(log).toContainEqual(
        expect.objectContaining({
          level: 'error',
          message: 'payment reconciliation amount differs from the order',
          order_id: id,
        }),
      );
    }
  });

  it('does not ask about an order before its first check is due', async () => {
    // Prepare
    const id = await order(channel, 'paid');
    const before = await storedOrder(table, id);

    // Act
    const summary = await reconcilerAhead(TOO_YOUNG)();

    // Assess
    expect(summary.checked).toBe(0);
    expect(channels.queries(channel).timesQueried(id)).toBe(0);
    await expectUntouched(id, before);
  });

  it('asks one last time about an order past its deadline and margin, then takes it off the schedule', async () => {
    // Prepare: the reconciler did not run for the order's whole life.
    const id = await order(channel, 'not_paid');
    const before = await storedOrder(table, id);

    // Act
    const last = await reconcilerAhead(PAST_ITS_END)();
    const later = await reconcilerAhead(PAST_ITS_END + 120)();

    // Assess: asked once, off the schedule, and shown expired (its stored status stays pending).
    expect(last).toMatchObject({ checked: 1, still_pending: 1, left_schedule: 1 });
    expect(later.checked).toBe(0);
    expect(channels.queries(channel).timesQueried(id)).toBe(1);
    await expectUntouched(id, before);
    expect(await scheduleOf(id)).toEqual({ next_check: undefined, checks: 1 });
    expect(metricCalls('ReconcileGaveUp')).toEqual([{ provider: channel }]);
  });
});

describe('a run over several channels', () => {
  it('counts per provider, and one channel being down does not stop the others', async () => {
    // Prepare
    channels.alipay.queries.set(await order('channel_a'), 'unreachable');
    const paidB = await order('channel_b', 'paid');
    const pendingC = await order('channel_c', 'not_paid');

    // Act
    const summary = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(summary).toMatchObject({ checked: 3, settled: 1, still_pending: 1, failed: 1 });
    expect(summary.providers).toEqual({
      channel_a: { checked: 1, settled: 0, already_paid: 0, still_pending: 0, failed: 1 },
      channel_b: { checked: 1, settled: 1, already_paid: 0, still_pending: 0, failed: 0 },
      channel_c: { checked: 1, settled: 0, already_paid: 0, still_pending: 1, failed: 0 },
    });
    expect((await storedOrder(table, paidB))?.status).toBe('paid');
    expect((await storedOrder(table, pendingC))?.status).toBe('pending');
  });

  it('starts no query when the invocation has too little time left; the next run asks', async () => {
    // Prepare
    const id = await order('channel_b', 'paid');

    // Act
    const short = await reconcilerAhead(IN_WINDOW, 5_000)();
    const next = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(short).toMatchObject({ checked: 0, truncated: true });
    expect(next).toMatchObject({ checked: 1, settled: 1, truncated: false });
    expect(channels.queries('channel_b').timesQueried(id)).toBe(1);
  });

  it('never asks about mock or manual orders, which have no channel', async () => {
    // Prepare
    const mock = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    const manual = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });
    placed.push(mock.json.data.id, manual.json.data.id);

    // Act
    const summary = await reconcilerAhead(IN_WINDOW)();

    // Assess
    expect(summary.checked).toBe(0);
    expect((await storedOrder(table, mock.json.data.id))?.status).toBe('pending');
    expect((await storedOrder(table, manual.json.data.id))?.status).toBe('pending');
  });
});
