// Partition heat under a load mix (docs/DESIGN.md 19): 50 accounts log in (each from its own address),
// upload, read the gallery, order and pay through a verified channel callback, order with one popular
// coupon, open one viral share link, and delete, and a few clients upload with the static token. No partition of the table or of an index may take more than a tenth
// of its writes: one that does would take a write for every request of a kind at any scale, and DynamoDB
// holds 1,000 WCU/s per partition. Counts, not timings.
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRemindersDeps } from '#functions/reminders/deps.ts';
import { needs as remindersNeeds } from '#functions/reminders/needs.ts';
import { classify, heatFigures, PARTITION_LIMITS, predict, TARGET_RATES } from '#test/perf/heat-model.ts';
import { testDeps } from '#test/support/deps.ts';
import { lambdaContext } from '#test/support/events.ts';
import { type LoadMixReport, runLoadMix } from '#test/support/load-mix.ts';
import { HeatRecorder } from '#test/support/partition-heat.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const MAX_WRITE_SHARE = 0.1;
const STATIC_TOKEN = 'load-mix-static-upload-token-0001';

const recorder = new HeatRecorder();
let report: LoadMixReport;

beforeAll(async () => {
  await provisionTestStack();
  const deps = testDeps({ staticUploadToken: STATIC_TOKEN });
  const { accounts, files, payments, paymentCallback, shares } = deps.handlers;
  // The reminders worker at its own pace, not SES's (docs/CAPACITY.md "Workers").
  const settings = {
    ...deps.settings,
    billing: { ...deps.settings.billing, reminders_per_second: 1_000_000 },
  };
  const { reminders } = buildRemindersDeps(testResources('reminders', remindersNeeds, { settings }));
  report = await runLoadMix({
    handlers: { accounts, files, payments, paymentCallback, shares },
    recorder,
    startRecording: () => recorder.install(deps.table.client as never),
    accounts: 50,
    rounds: 2,
    // 500 orders: enough that no shard of the order listings takes a tenth of their writes by chance.
    ordersPerRound: 5,
    staticToken: STATIC_TOKEN,
    workers: {
      takedowns: () => deps.handlers.takedowns({}, lambdaContext as Context),
      reminders: () => reminders.run(),
      moderation: (event) => deps.handlers.moderation(event, lambdaContext as Context),
    },
    table: deps.table,
    listingShards: deps.settings.listing_shards,
  });
}, 240_000);

afterAll(() => recorder.uninstall());

/** The hottest partitions as a readable table, for the failure message. */
function hottest(limit = 15): string {
  const usernames = new Set(report.usernames);
  const predicted = new Map(
    predict(recorder.keys(), report.requests, usernames).map((entry) => [
      `${entry.space} ${entry.key}`,
      entry,
    ]),
  );
  return recorder
    .writeShares()
    .slice(0, limit)
    .map((entry) => {
      const target = predicted.get(`${entry.space} ${entry.key}`);
      return `${(entry.share * 100).toFixed(1).padStart(5)} %  ${entry.writes} writes  ${entry.space} ${entry.key}  [${classify(entry, usernames)}; ${target?.wcu_per_s ?? 0} WCU/s at target; ${Object.keys(entry.byPath).join(', ')}]`;
    })
    .join('\n');
}

describe('partition heat of a load mix of 50 accounts', () => {
  it('ran every path of the mix', () => {
    expect(Object.keys(report.requests).sort()).toEqual(Object.keys(TARGET_RATES).sort());
  });

  it('gives no partition of the table or of an index more than a tenth of its writes', () => {
    const over = recorder.writeShares().filter((entry) => entry.share > MAX_WRITE_SHARE);

    expect(
      over.map((entry) => `${entry.space} ${entry.key}`),
      `partitions over ${MAX_WRITE_SHARE * 100} % of their space's writes; the hottest:\n${hottest()}\n`,
    ).toEqual([]);
  });

  it('predicts every shared partition within its limit at ten times the target, shards populated', () => {
    const usernames = new Set(report.usernames);
    const heat = heatFigures(predict(recorder.keys(), report.requests, usernames));
    const shared = predict(recorder.keys(), report.requests, usernames).filter(
      (entry) => entry.class === 'shared',
    );
    const top = [
      ...[...shared].sort((a, b) => b.wcu_per_s - a.wcu_per_s).slice(0, 5),
      ...[...shared].sort((a, b) => b.rcu_per_s - a.rcu_per_s).slice(0, 5),
    ]
      .map(
        (entry) =>
          `${entry.space} ${entry.key}: ${entry.wcu_per_s} WCU/s, ${entry.rcu_per_s} RCU/s (${entry.paths.join(', ')})`,
      )
      .join('\n');
    console.log(`HEAT ${JSON.stringify({ ...heat, top: undefined })}\n${top}`);

    // Every worker path took items: the figures are per reminder mailed and per takedown denied.
    expect(report.requests.reminders).toBeGreaterThanOrEqual(50);
    expect(report.requests['takedowns-run']).toBe(report.requests.takedown);
    // A view of a share without a view limit, file or album, writes nothing (docs/DESIGN.md 24); the one
    // write allowed is the deployment's grant key, created once by the first view that needs it.
    const written = recorder
      .keys()
      .filter((entry) => !entry.key.startsWith('settings#'))
      .filter((entry) =>
        ['share-view', 'album-share-view'].some((path) => (entry.byPath[path]?.wcu ?? 0) > 0),
      )
      .map((entry) => `${entry.space} ${entry.key}`);
    expect(written).toEqual([]);
    expect(heat.hot_key_wcu_at_10x, top).toBeLessThanOrEqual(PARTITION_LIMITS.wcu);
    expect(heat.hot_key_rcu_at_10x, top).toBeLessThanOrEqual(PARTITION_LIMITS.rcu);
  });
});
