// The reconciler's schedule (docs/PAYMENTS-GUIDE.md, "Reconciliation"): every pending channel order is on it
// from the moment it is placed and leaves it in the same write that pays, cancels or fails it; each check
// that finds it unpaid waits twice as long before the next; it leaves unpaid after max_checks; one run
// asks about at most max_orders_per_run and the next run carries on with the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReconcilerDeps } from '#functions/reconciler/deps.ts';
import { needs } from '#functions/reconciler/needs.ts';
import { config } from '#lib/platform/config/index.ts';
import { shardOf } from '#lib/platform/db/shards.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { startLoopbackServer } from '#test/support/fake-gateways/index.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call, captureLog, deliverCallback } from './helpers.ts';
import {
  type ChannelHarness,
  createPlan,
  placeOrder,
  reconcilerAhead,
  startChannels,
  storedOrder,
} from './reconcile-support.ts';

captureLog();
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;
let channels: ChannelHarness;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  channels = await startChannels(admin);
  planId = await createPlan(admin, 'Schedule plan');
});

afterAll(async () => {
  await channels?.close();
});

/** The order's place in the schedule as stored: absent once it has left. */
async function scheduleOf(id: string) {
  const item = (await storedOrder(table, id)) as unknown as Record<string, unknown>;
  return { shard: item.gsi3pk, due: item.gsi3sk, checks: item.reconcile_checks, status: item.status };
}

/** Off the schedule, so no run asks about it again. */
async function cancelAll(ids: string[]) {
  for (const id of ids) await call('POST', `/api/v1/orders/${id}/cancel`, { headers: buyer.headers });
}

/** The reconciler with some payment.reconcile settings replaced, its clock `minutesAhead` of now. */
function reconcilerWith(reconcile: Partial<typeof config.payment.reconcile>, minutesAhead: number) {
  const settings = {
    ...config,
    payment: { ...config.payment, reconcile: { ...config.payment.reconcile, ...reconcile } },
  };
  const clock = () => new Date(Date.now() + minutesAhead * 60_000);
  const { reconciler } = buildReconcilerDeps(testResources('reconciler', needs, { settings, clock }));
  return () => reconciler.run();
}

describe('the schedule of a channel order', () => {
  it('takes a channel order from the start, first check min_age_minutes after it is placed; never a mock or manual one', async () => {
    // Act
    const before = Date.now();
    const channel = await placeOrder(buyer, planId, 'channel_b');
    const mock = await placeOrder(buyer, planId, 'mock' as never);
    const manual = await placeOrder(buyer, planId, 'manual' as never);

    // Assess
    const schedule = await scheduleOf(channel);
    expect(schedule).toMatchObject({ shard: expect.stringMatching(/^due#\d+$/), checks: 0 });
    const due = Date.parse(String(schedule.due).split('#')[0]!);
    expect(due).toBeGreaterThanOrEqual(before + 3 * 60_000);
    expect(due).toBeLessThan(Date.now() + 3 * 60_000 + 1000);
    expect(String(schedule.due).endsWith(`#${channel}`)).toBe(true);
    expect(await scheduleOf(mock)).toMatchObject({ shard: undefined, due: undefined });
    expect(await scheduleOf(manual)).toMatchObject({ shard: undefined, due: undefined });
    await cancelAll([channel, mock, manual]);
  });

  it('leaves the schedule in the write that pays it (callback) or cancels it', async () => {
    // Prepare
    const paid = await placeOrder(buyer, planId, 'channel_c');
    const cancelled = await placeOrder(buyer, planId, 'channel_a');

    // Act
    const callback = await deliverCallback('channel_c', channels.callbackFor('channel_c', paid));
    await call('POST', `/api/v1/orders/${cancelled}/cancel`, { headers: buyer.headers });

    // Assess
    expect(callback.status).toBe(200);
    expect(await scheduleOf(paid)).toEqual({ shard: undefined, due: undefined, checks: 0, status: 'paid' });
    expect(await scheduleOf(cancelled)).toEqual({
      shard: undefined,
      due: undefined,
      checks: 0,
      status: 'cancelled',
    });
  });

  it('leaves the schedule when the channel cannot take the order (failed)', async () => {
    // Prepare: channel_c's order API answers a channel error.
    const current = await call('GET', '/api/v1/admin/payment', { headers: admin.headers });
    const apiUrl = current.json.data.channel_c.api_url as string | null;
    const broken = await startLoopbackServer(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: -2, msg: 'channel down' }),
    }));
    const saved = await call('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: { channel_c: { api_url: `${broken.baseUrl}/mapi.php` }, current_password: admin.password },
    });
    expect(saved.status).toBe(200);

    try {
      // Act
      const answer = await call('POST', '/api/v1/orders', {
        headers: buyer.headers,
        body: { plan_id: planId, provider: 'channel_c' },
      });

      // Assess
      expect(answer.status).toBe(502);
      expect(await scheduleOf(answer.json.data.order_id)).toMatchObject({
        shard: undefined,
        due: undefined,
        status: 'failed',
      });
    } finally {
      await broken.close();
      await call('PUT', '/api/v1/admin/payment', {
        headers: admin.headers,
        body: { channel_c: { api_url: apiUrl }, current_password: admin.password },
      });
    }
  });

  it('waits twice as long after each unpaid check, and leaves unpaid after max_checks', async () => {
    // Prepare
    const id = await placeOrder(buyer, planId, 'channel_a');
    channels.queries('channel_a').set(id, 'not_paid');
    const settings = { max_checks: 3 };

    // Act: runs at +5 (first check due at +3), +11 (+5 then a wait of 6), +23 (+11 then 12).
    const first = await reconcilerWith(settings, 5)();
    const afterFirst = await scheduleOf(id);
    const early = await reconcilerWith(settings, 10)();
    const second = await reconcilerWith(settings, 11.1)();
    const afterSecond = await scheduleOf(id);
    const third = await reconcilerWith(settings, 23.2)();
    const afterThird = await scheduleOf(id);
    const later = await reconcilerWith(settings, 60)();

    // Assess
    const minutesFromNow = (due: unknown) => (Date.parse(String(due).split('#')[0]!) - Date.now()) / 60_000;
    expect(first).toMatchObject({ checked: 1, still_pending: 1, left_schedule: 0 });
    expect(afterFirst.checks).toBe(1);
    expect(minutesFromNow(afterFirst.due)).toBeCloseTo(11, 0);
    expect(early.checked).toBe(0);
    expect(second).toMatchObject({ checked: 1, still_pending: 1, left_schedule: 0 });
    expect(afterSecond.checks).toBe(2);
    expect(minutesFromNow(afterSecond.due)).toBeCloseTo(23, 0);
    expect(third).toMatchObject({ checked: 1, still_pending: 1, left_schedule: 1 });
    expect(afterThird).toEqual({ shard: undefined, due: undefined, checks: 3, status: 'pending' });
    expect(later.checked).toBe(0);
    expect(channels.queries('channel_a').timesQueried(id)).toBe(3);
    await cancelAll([id]);
  });

  it('asks about at most max_orders_per_run orders, most overdue first; the next run carries on', async () => {
    // Prepare
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) ids.push(await placeOrder(buyer, planId, 'channel_b'));
    for (const id of ids) channels.queries('channel_b').set(id, 'not_paid');
    const settings = { max_orders_per_run: 2 };

    // Act
    const first = await reconcilerWith(settings, 5)();
    const second = await reconcilerWith(settings, 5)();

    // Assess
    expect(first).toMatchObject({ checked: 2, truncated: true });
    expect(second).toMatchObject({ checked: 1, truncated: false });
    expect(ids.map((id) => channels.queries('channel_b').timesQueried(id))).toEqual([1, 1, 1]);
    await cancelAll(ids);
  });

  it('says a run was cut short when one shard alone holds more due orders than it may ask about', async () => {
    // Prepare: three due orders in one shard of the due listing (placed until three share one).
    const byShard = new Map<number, string[]>();
    let shared: string[] | undefined;
    const placed: string[] = [];
    while (!shared) {
      const id = await placeOrder(buyer, planId, 'channel_b');
      placed.push(id);
      const shard = shardOf(id, config.listing_shards);
      byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
      if (byShard.get(shard)!.length === 3) shared = byShard.get(shard);
    }
    await cancelAll(placed.filter((id) => !shared!.includes(id)));
    for (const id of shared) channels.queries('channel_b').set(id, 'not_paid');

    // Act
    const first = await reconcilerWith({ max_orders_per_run: 2 }, 5)();
    const second = await reconcilerWith({ max_orders_per_run: 2 }, 5)();

    // Assess
    expect(first).toMatchObject({ checked: 2, truncated: true });
    expect(second).toMatchObject({ checked: 1, truncated: false });
    await cancelAll(shared);
  });

  it('keeps the place of an order whose channel is off, without counting a check, until its end', async () => {
    // Prepare: an order of channel_a, then channel_a switched off.
    const id = await placeOrder(buyer, planId, 'channel_a');
    await call('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: { channel_a: { enabled: false } },
    });

    try {
      // Act
      const whileOff = await reconcilerAhead(5)();
      const kept = await scheduleOf(id);
      const pastEnd = await reconcilerAhead(30 + 60 + 2)();

      // Assess
      expect(whileOff.checked).toBe(0);
      expect(kept).toMatchObject({ shard: expect.any(String), checks: 0 });
      expect(String(kept.due) > new Date(Date.now() + 5 * 60_000).toISOString()).toBe(true);
      expect(pastEnd).toMatchObject({ checked: 0, left_schedule: 1 });
      expect(await scheduleOf(id)).toMatchObject({ shard: undefined, checks: 0, status: 'pending' });
      expect(channels.queries('channel_a').timesQueried(id)).toBe(0);
    } finally {
      await call('PUT', '/api/v1/admin/payment', {
        headers: admin.headers,
        body: { channel_a: { enabled: true } },
      });
    }
  });
});
