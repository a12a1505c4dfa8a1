// From a load run's partition heat (test/support/partition-heat.ts) to the target load of docs/DESIGN.md:
// each partition's WCU/s and RCU/s when every path runs at its target rate, and the hottest partition that
// does not spread with the number of accounts, files and orders (docs/PERFORMANCE.md "Partition heat").
import type { KeyHeat } from '#test/support/partition-heat.ts';
import { round } from './stats.ts';

/**
 * Requests per second of each load-mix path at the target (10 million accounts). Logins, uploads and
 * callbacks are the design's; the rest are this document's assumptions, stated in docs/PERFORMANCE.md.
 */
export const TARGET_RATES: Record<string, number> = {
  // 1,000 logins/s in all: 700 by password alone, 200 presenting a device token, 100 by passkey (each of
  // those asks for its options first).
  login: 700,
  'login-device': 200,
  'passkey-options': 100,
  'passkey-login': 100,
  // 500 uploads/s in all: 450 by sessions, 50 with the static upload token.
  upload: 450,
  'upload-static': 50,
  // Every callback settles an order; a third of orders are abandoned.
  order: 150,
  callback: 100,
  gallery: 200,
  delete: 50,
  // A sale: a third of the orders carry the one popular coupon (docs/CAPACITY.md "Coupons").
  'coupon-order': 50,
  // One viral link's page as the function sees it: the CDN keeps it a minute in each of its edge caches
  // (docs/ALBUMS.md), so however many view it, each of about 600 edge locations and 13 regional caches
  // asks about once a minute: 20 a second is above that. Many links viewed at once are each their own key.
  'share-view': 20,
  // One viral album share's page, as the function sees it (the same minute at the CDN).
  'album-share-view': 20,
  // 1,000 takedowns a minute (docs/DESIGN.md 24), and the takedowns worker's runs per takedown taken.
  takedown: 1000 / 60,
  'takedowns-run': 1000 / 60,
  // 1 million renewal reminders a day, per reminder mailed.
  reminders: 1_000_000 / 86_400,
  // Every upload classified once by the moderation worker (docs/MODERATION.md), and a report for one in
  // fifty of them (a busy host's abuse desk sees far fewer).
  classify: 500,
  report: 10,
};

/** The target's multiple every key must still hold at (docs/DESIGN.md 24): at 10x, within its partition. */
export const SCALE_HEADROOM = 10;

/** DynamoDB's per-partition limits; the goals are half of each. */
export const PARTITION_LIMITS = { wcu: 1000, rcu: 3000 } as const;

const ENTITY_SEGMENT = [
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i, // uuid: accounts, files, orders, sessions
  /^[0-9a-f]{16,}$/i, // digests: tokens, content hashes
  /^[A-Za-z0-9_-]{22,}$/, // base64url ids
  /^\d{1,3}(\.\d{1,3}){3}$/, // IPv4
  /^[0-9a-f:]*:[0-9a-f:]+$/i, // IPv6
  /@/, // email addresses
];

export type KeyClass = 'per-entity' | 'shared';

/**
 * A partition spreads at scale ("per-entity") when its key names one account, file, order, session or
 * address (a uuid, a digest, an address, an email or one of the run's usernames) AND only one caller's
 * requests touched it in the run. Anything else ("shared": no id, a shard `name#<n>`, or an entity's item
 * every caller reaches, like the static token owner's usage or a plan every order reads) counts at its
 * full predicted rate.
 */
export function classify(entry: Pick<KeyHeat, 'key' | 'callers'>, usernames: ReadonlySet<string>): KeyClass {
  const segments = entry.key.split('#').slice(1);
  const lower = entry.key.toLowerCase();
  // A username may sit inside a segment (`user-<name>`), so it is looked for anywhere after the prefix.
  const named =
    segments.some((segment) => ENTITY_SEGMENT.some((pattern) => pattern.test(segment))) ||
    [...usernames].some((name) => lower.includes(`#${name}`) || lower.includes(`-${name}`));
  return named && entry.callers.size <= 1 ? 'per-entity' : 'shared';
}

export interface PredictedKey {
  space: string;
  key: string;
  class: KeyClass;
  /** Share of its space's item writes in the run. */
  write_share: number;
  wcu_per_s: number;
  rcu_per_s: number;
  /** The paths that put units on it. */
  paths: string[];
}

/**
 * The family of a shard's key (`gallery#public#14` → `gallery#public`, `usage#<id>#t3` → `usage#<id>`), or
 * undefined for a key that is no shard: a listing's shards, a coupon's or a usage's buckets, a spread rate.
 */
export function shardFamily(key: string): string | undefined {
  return /^(.+)#[st]?\d{1,2}$/.exec(key)?.[1];
}

/**
 * Each partition at the target: Σ over paths of (its units in the run / the path's requests) × target rate.
 * A shard is predicted at its family's mean over the shards the run touched: a shard is chosen by a hash of
 * the item's id (or at random), so at the target's millions of items each takes an even share, and what one
 * shard took of a run's hundred-odd writes is sampling noise (it swung a gallery shard between 35 and 90
 * WCU/s from run to run).
 */
export function predict(
  keys: KeyHeat[],
  requests: Record<string, number>,
  usernames: ReadonlySet<string>,
  rates: Record<string, number> = TARGET_RATES,
): PredictedKey[] {
  const writes = new Map<string, number>();
  for (const entry of keys) writes.set(entry.space, (writes.get(entry.space) ?? 0) + entry.writes);
  const predicted = keys.map((entry): PredictedKey => {
    let wcu = 0;
    let rcu = 0;
    for (const [path, units] of Object.entries(entry.byPath)) {
      const perRequest = 1 / (requests[path] ?? Number.POSITIVE_INFINITY);
      wcu += units.wcu * perRequest * (rates[path] ?? 0);
      rcu += units.rcu * perRequest * (rates[path] ?? 0);
    }
    return {
      space: entry.space,
      key: entry.key,
      class: classify(entry, usernames),
      write_share: round(entry.writes / (writes.get(entry.space) || 1), 3),
      wcu_per_s: round(wcu, 1),
      rcu_per_s: round(rcu, 1),
      paths: Object.keys(entry.byPath).sort(),
    };
  });
  const families = new Map<string, PredictedKey[]>();
  for (const entry of predicted) {
    const family = shardFamily(entry.key);
    if (family !== undefined && entry.class === 'shared') {
      const name = `${entry.space} ${family}`;
      families.set(name, [...(families.get(name) ?? []), entry]);
    }
  }
  for (const members of families.values()) {
    const mean = (units: (entry: PredictedKey) => number) =>
      round(members.reduce((sum, entry) => sum + units(entry), 0) / members.length, 1);
    const wcu = mean((entry) => entry.wcu_per_s);
    const rcu = mean((entry) => entry.rcu_per_s);
    for (const entry of members) Object.assign(entry, { wcu_per_s: wcu, rcu_per_s: rcu });
  }
  return predicted.sort(
    (a, b) => Math.max(b.wcu_per_s, b.rcu_per_s / 3) - Math.max(a.wcu_per_s, a.rcu_per_s / 3),
  );
}

export interface HeatFigures {
  hot_key_wcu_at_target: number;
  hot_key_rcu_at_target: number;
  /** The same keys at SCALE_HEADROOM times the target (a shared key's units grow with its rate). */
  hot_key_wcu_at_10x: number;
  hot_key_rcu_at_10x: number;
  hottest_write_key: string | null;
  hottest_read_key: string | null;
  /** The hottest shared keys, for the report. */
  top: PredictedKey[];
}

export function heatFigures(predicted: PredictedKey[], top = 12): HeatFigures {
  const shared = predicted.filter((entry) => entry.class === 'shared');
  const byWrites = [...shared].sort((a, b) => b.wcu_per_s - a.wcu_per_s)[0];
  const byReads = [...shared].sort((a, b) => b.rcu_per_s - a.rcu_per_s)[0];
  return {
    hot_key_wcu_at_target: byWrites?.wcu_per_s ?? 0,
    hot_key_rcu_at_target: byReads?.rcu_per_s ?? 0,
    hot_key_wcu_at_10x: round((byWrites?.wcu_per_s ?? 0) * SCALE_HEADROOM, 1),
    hot_key_rcu_at_10x: round((byReads?.rcu_per_s ?? 0) * SCALE_HEADROOM, 1),
    hottest_write_key: byWrites ? `${byWrites.space} ${byWrites.key}` : null,
    hottest_read_key: byReads ? `${byReads.space} ${byReads.key}` : null,
    top: shared.slice(0, top),
  };
}
