// Workers that keep up (docs/DESIGN.md 24, docs/CAPACITY.md "Workers"): a batch of due work seeded straight
// into the table (BatchWriteItem), then one run of each scheduled worker as deployed, built by its own
// builder: the reconciler over 10,000 pending channel_c orders whose check is due (the fake channel answers
// "not paid"), fanned out over its shards as its schedule invokes it, the reminders over grants ending within the window, the takedowns worker over 5,000 recorded
// takedowns. Each must take every due item exactly once (no order asked about twice, no reminder mailed
// twice, every file on the deny-list once); the rate each reached is printed, never asserted (DynamoDB
// Local answers one request at a time on a shared machine). The suite runs 10,000 reminders; the full-size
// run (100,000) is `npm run bench:workers` (test/perf/README.md).
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReconcilerDeps } from '#functions/reconciler/deps.ts';
import { RECONCILE_FAN_OUT, shardRanges } from '#functions/reconciler/fan-out.ts';
import { createReconcilerHandler } from '#functions/reconciler/handler.ts';
import { needs as reconcilerNeeds } from '#functions/reconciler/needs.ts';
import { buildRemindersDeps } from '#functions/reminders/deps.ts';
import { needs as remindersNeeds } from '#functions/reminders/needs.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { DUE_ORDERS, dueSortKey, orderKey } from '#lib/billing/orders.ts';
import { RENEWALS, renewalItem, renewalKey } from '#lib/billing/renewals.ts';
import type { Grant } from '#lib/files/quota-model.ts';
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import {
  MAX_TAKEDOWN_PATHS,
  MAX_TAKEDOWN_WILDCARD_PATHS,
  TAKEDOWN_LISTING_NAME,
  type TakedownItem,
} from '#lib/platform/cdn/takedowns.ts';
import { config } from '#lib/platform/config/index.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import type { Item, Key, Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { lambdaContext } from '#test/support/events.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from '../billing/helpers.ts';
import { type ChannelHarness, startChannels } from '../billing/reconcile-support.ts';

const FULL_SIZE = process.env.WORKER_BENCH === '1';
const SIZES = { orders: 10_000, reminders: FULL_SIZE ? 100_000 : 10_000, takedowns: 5_000 };
const TARGETS = { reconcile: 50, reminders: 1_000_000 / 86_400, takedowns: 1_000 / 60 };
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const shards = config.listing_shards;

let table: Table;
let channels: ChannelHarness;
let channelCOrigin: string;
const rates: Record<string, { items: number; seconds: number; perSecond: number; target: number }> = {};

/** Puts every item, 25 to a BatchWriteItem, `parallel` requests at once. */
async function seed(items: Array<Item & Key>, parallel = 8): Promise<void> {
  const batches: Array<Array<Item & Key>> = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) await table.writeBatch(batches[next++]!);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Every item of these keys, 100 to a BatchGetItem. */
async function readAll(keys: Key[]): Promise<Array<Item | undefined>> {
  const pages: Array<Promise<Array<Item | undefined>>> = [];
  for (let start = 0; start < keys.length; start += 100)
    pages.push(table.getMany(keys.slice(start, start + 100)));
  return (await Promise.all(pages)).flat();
}

async function timed<T>(name: keyof typeof TARGETS, items: number, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await run();
  const seconds = (performance.now() - started) / 1000;
  rates[name] = { items, seconds, perSecond: items / seconds, target: TARGETS[name] };
  return result;
}

const counts = (values: readonly string[]) => {
  const seen = new Map<string, number>();
  for (const value of values) seen.set(value, (seen.get(value) ?? 0) + 1);
  return seen;
};

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  const admin = await createTestAccount({ role: 'admin' });
  channels = await startChannels(admin);
  const saved = await call('GET', '/api/v1/admin/payment', { headers: admin.headers });
  channelCOrigin = new URL(saved.json.data.channel_c.api_url as string).origin;
}, 60_000);

afterAll(async () => {
  await channels?.close();
  // What each worker reached here, beside its target (docs/CAPACITY.md "Workers" records a run).
  console.log(
    `WORKERS ${JSON.stringify(
      Object.fromEntries(
        Object.entries(rates).map(([name, rate]) => [
          name,
          {
            items: rate.items,
            seconds: Number(rate.seconds.toFixed(1)),
            per_second: Math.round(rate.perSecond),
            target_per_second: Number(rate.target.toFixed(1)),
          },
        ]),
      ),
    )}`,
  );
});

describe('workers that keep up', () => {
  it('asks about each of 10,000 due channel orders exactly once in one fanned-out reconciler run', async () => {
    // Prepare: pending channel_c orders placed at its fake gateway, first check a minute ago.
    const now = Date.now();
    const ids = Array.from({ length: SIZES.orders }, (_, n) => `rc-${now}-${n}`);
    await seed(
      ids.map((id) => ({
        ...orderKey(id),
        id,
        user_id: 'worker-load',
        status: 'pending',
        provider: 'channel_c',
        gateway_origin: channelCOrigin,
        amount_cents: 1230,
        deadline_ms: now + 30 * MINUTE_MS,
        gsi3pk: shardPartition({ name: DUE_ORDERS, count: shards }, id),
        gsi3sk: dueSortKey(new Date(now - MINUTE_MS), id),
        reconcile_checks: 0,
      })),
    );
    for (const id of ids) channels.queries('channel_c').set(id, 'not_paid');
    const deps = buildReconcilerDeps(testResources('reconciler', reconcilerNeeds));
    const handler = createReconcilerHandler(() => deps);
    const ranges = shardRanges(shards);

    // Act: one scheduled run, fanned out as the schedule invokes it (one invocation per range of shards).
    const summaries = await timed('reconcile', ids.length, () =>
      Promise.all(ranges.map((range) => handler({ shards: range }, lambdaContext as Context))),
    );

    // Assess
    const asked = counts(channels.queries('channel_c').queried);
    expect(ranges).toHaveLength(RECONCILE_FAN_OUT);
    expect(summaries.every((summary) => summary.checked > 0 && !summary.truncated)).toBe(true);
    expect(summaries.reduce((total, summary) => total + summary.still_pending, 0)).toBe(ids.length);
    expect(ids.filter((id) => asked.get(id) !== 1)).toEqual([]);
    const stored = await readAll(ids.map(orderKey));
    expect(stored.filter((item) => item?.reconcile_checks !== 1)).toEqual([]);
    expect(stored.filter((item) => String(item?.gsi3sk) <= dueSortKey(new Date(now), ''))).toEqual([]);
  }, 300_000);

  it(`mails each of ${SIZES.reminders.toLocaleString('en')} due renewal reminders exactly once`, async () => {
    // Prepare: accounts whose grants end in two days (within the 3 days reminded of).
    const now = Date.now();
    const ids = Array.from({ length: SIZES.reminders }, (_, n) => `rm-${now}-${n}`);
    const address = (id: string) => `${id}@reminders.example.com`;
    await seed(
      ids.flatMap((id) => {
        const grant = { order_id: `o-${id}`, plan_name: 'Plan', ends_ms: now + 2 * DAY_MS } as Grant;
        return [
          { ...accountKey(id), id, username: id, email: address(id) },
          renewalItem(id, grant, shards).Put!.Item as Item & Key,
        ];
      }),
    );
    const sent: string[] = [];
    const mailer: Mailer = { send: async (mail) => void sent.push(mail.to) };
    // The worker's own pace, not SES's: the rate setting well above what the stand-ins carry.
    const settings = { ...config, billing: { ...config.billing, reminders_per_second: 1_000_000 } };
    const { reminders } = buildRemindersDeps(
      testResources('reminders', remindersNeeds, { settings, provided: { mail: mailer } }),
    );

    // Act
    const summary = await timed('reminders', ids.length, () => reminders.run());
    const again = await reminders.run();

    // Assess
    const mailed = counts(sent);
    expect(summary).toMatchObject({ found: ids.length, reminded: ids.length, failed: 0, more: false });
    expect(again).toMatchObject({ found: 0, reminded: 0 });
    expect(ids.filter((id) => mailed.get(address(id)) !== 1)).toEqual([]);
    expect(sent).toHaveLength(ids.length);
    const entries = await readAll(ids.map(renewalKey));
    expect(entries.filter((entry) => entry?.gsi3pk !== undefined)).toEqual([]);
    expect(RENEWALS).toBe('renewals');
  }, 900_000);

  it('puts each of 5,000 recorded takedowns on the deny-list once, invalidating within the allowance', async () => {
    // Prepare: takedowns as the back office records them (`/i/<key>*`), a minute ago.
    const now = Date.now();
    const keys = Array.from({ length: SIZES.takedowns }, (_, n) => `2026/11/28/td-${now}-${n}.png`);
    const recordedAt = new Date(now - MINUTE_MS).toISOString();
    await seed(
      keys.map((key): TakedownItem => {
        const path = `/i/${key}*`;
        return {
          pk: `takedown#${path}`,
          sk: 'takedown',
          gsi2pk: shardPartition({ name: TAKEDOWN_LISTING_NAME, count: shards }, path),
          gsi2sk: `${recordedAt}#${path}`,
          expires_at: Math.floor(now / 1000) + config.cdn.deleted_max_age_seconds,
        };
      }),
    );
    const listed: string[] = [];
    const denyList: EdgeDenyList = {
      put: async (batch) => void listed.push(...batch),
      remove: async () => {},
      write: async () => {},
    };
    const invalidations: string[][] = [];
    const cdn: Invalidator = { invalidate: async (paths) => void invalidations.push(paths) };
    const { handlers } = testDeps({ denyList, cdn });

    // Act
    const run = await timed('takedowns', keys.length, () => handlers.takedowns({}, lambdaContext as Context));
    const next = await handlers.takedowns({}, lambdaContext as Context);

    // Assess
    const once = counts(listed);
    expect(run).toMatchObject({ denied: keys.length, invalidations: 1, more: true });
    expect(next.denied).toBe(0);
    expect(keys.filter((key) => once.get(key) !== 1)).toEqual([]);
    for (const paths of invalidations) {
      expect(paths.length).toBeLessThanOrEqual(MAX_TAKEDOWN_PATHS);
      expect(paths.filter((path) => path.endsWith('*')).length).toBeLessThanOrEqual(
        MAX_TAKEDOWN_WILDCARD_PATHS,
      );
    }
    expect(new Set(invalidations.flat()).size).toBe(invalidations.flat().length);
  }, 300_000);
});
