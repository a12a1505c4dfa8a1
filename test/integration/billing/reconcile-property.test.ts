// Property: a paid channel order settles exactly once whether its callback, the reconciler, or both arrive,
// repeated, in any order and concurrently: one paid order (one paid_via, one trade number, no "second
// payment"), one grant on the account (a plan's grant applied twice would extend it twice).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { deliverCallback } from './helpers.ts';
import {
  CHANNELS,
  type ChannelHarness,
  createPlan,
  grantOf,
  placeOrder,
  reconcilerAhead,
  startChannels,
  storedOrder,
  TRADE_NO,
} from './reconcile-support.ts';

const DAY_MS = 86_400_000;
const DURATION_DAYS = 30;

let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let channels: ChannelHarness;
let plans = 0;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  channels = await startChannels(admin);
});

afterAll(async () => {
  await channels?.close();
});

type Arrival = 'callback' | 'reconciler';

describe('callback and reconciler together', () => {
  it('settle a paid order exactly once, whatever arrives, in any order, concurrently', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CHANNELS),
        fc.array(fc.constantFrom<Arrival>('callback', 'reconciler'), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (channel, arrivals, concurrently) => {
          // Prepare: a plan of its own, so this order's grant replaces the last one from now (applied
          // twice, it would extend itself by another 30 days).
          plans += 1;
          const planId = await createPlan(admin, `Property plan ${plans}`, DURATION_DAYS);
          const id = await placeOrder(buyer, planId, channel);
          channels.queries(channel).set(id, 'paid');
          const reconciler = reconcilerAhead(5);
          const arrive = async (arrival: Arrival) => {
            if (arrival === 'reconciler') return (await reconciler()).settled;
            const answer = await deliverCallback(channel, channels.callbackFor(channel, id));
            expect(answer.status).toBe(200);
            return 0;
          };

          // Act
          const settledByReconciler = concurrently
            ? await Promise.all(arrivals.map(arrive))
            : await arrivals.reduce<Promise<number[]>>(
                async (done, arrival) => [...(await done), await arrive(arrival)],
                Promise.resolve([]),
              );

          // Assess
          const stored = await storedOrder(table, id);
          expect(stored).toMatchObject({ status: 'paid', trade_no: TRADE_NO[channel] });
          expect(stored?.extra_trade_nos).toBeUndefined();
          const reconciled = settledByReconciler.reduce((sum, count) => sum + count, 0);
          // Exactly one writer won: the reconciler counts its own win, and paid_via names the winner.
          expect(reconciled).toBe(stored?.paid_via === 'reconciliation' ? 1 : 0);
          if (!arrivals.includes('callback')) expect(stored?.paid_via).toBe('reconciliation');
          if (!arrivals.includes('reconciler')) expect(stored?.paid_via).toBe('callback');
          const grant = await grantOf(table, buyer.account.id);
          expect(grant).toMatchObject({ order_id: id, plan_id: planId });
          const grantedMs = grant!.ends_ms! - Date.parse(grant!.started_at);
          // started_at has whole seconds; a second application would add another 30 days.
          expect(grantedMs).toBeGreaterThanOrEqual(DURATION_DAYS * DAY_MS);
          expect(grantedMs).toBeLessThan(DURATION_DAYS * DAY_MS + 1000);
          expect(stored?.grant).toEqual(grant);
        },
      ),
      { numRuns: 24 },
    );
  }, 180_000);
});
