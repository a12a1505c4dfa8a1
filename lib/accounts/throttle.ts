// A rate limiter whose state lives in the table, so limits hold across restarts and across instances
// (docs/SPEC.md 8). Every decision is one conditional update; nothing is read first and written after.
//
// Per-minute rate with a burst uses GCRA (a token bucket kept as one timestamp, the "theoretical arrival
// time"): with interval T = 60 s / perMinute and tolerance (burst - 1) * T, a request at `now` is admitted
// when TAT - now <= tolerance, and moves TAT to max(TAT, now) + T. The daily cap is a counter per UTC day.

import { errors } from '#lib/core/errors.ts';
import { conditionFailedReturns, epochSeconds, type Table } from '#lib/platform/db/table.ts';

export interface RateLimit {
  /** Sustained rate: requests per minute (fractions allowed, e.g. 0.5 = one every two minutes). */
  perMinute?: number;
  /** How many may come at once after a quiet period; defaults to ceil(perMinute). */
  burst?: number;
  /** At most this many per UTC day. */
  perDay?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Concurrent requests read the clock a few milliseconds apart (and containers' clocks differ), and reach
 * the table in any order: one that read its clock just before the first admission would otherwise be
 * refused a place in a burst that still had room. So a request may be admitted this much early.
 */
const CLOCK_SKEW_MS = 250;
const throttleKey = (key: string, sk: string) => ({ pk: `throttle#${key}`, sk });
/** `consumeSpread`: one bucket per this much of the burst, at most MAX_SPREAD buckets. */
const BURST_PER_BUCKET = 50;
const MAX_SPREAD = 8;

/**
 * How a busy key's limit is spread: `count` buckets, each allowing `limit`, a share rounded down of the
 * whole (so together they never pass it). A burst under 2 * BURST_PER_BUCKET keeps one bucket: the limit
 * exactly as set.
 */
export function spreadLimit(limit: RateLimit): { count: number; limit: RateLimit } {
  const burst = limit.burst ?? Math.ceil(limit.perMinute ?? 0);
  const byDay = limit.perDay ? limit.perDay : MAX_SPREAD;
  const count = Math.max(1, Math.min(MAX_SPREAD, Math.floor(burst / BURST_PER_BUCKET), byDay));
  if (count === 1) return { count, limit };
  return {
    count,
    limit: {
      ...(limit.perMinute ? { perMinute: limit.perMinute / count, burst: Math.floor(burst / count) } : {}),
      ...(limit.perDay ? { perDay: Math.floor(limit.perDay / count) } : {}),
    },
  };
}

export interface ThrottleDeps {
  table: Table;
}

export class Throttle {
  constructor(private readonly deps: ThrottleDeps) {}

  /**
   * Takes one request from `key`'s allowance, or throws 429 (with Retry-After) and takes nothing from the
   * per-minute allowance. The minute check runs first, so concurrent excess requests never touch the
   * daily count.
   */
  async consume(key: string, limit: RateLimit, message = 'Too many requests'): Promise<void> {
    const now = this.deps.table.clock().getTime();
    if (limit.perMinute !== undefined && limit.perMinute > 0) {
      const waitMs = await this.takeFromBucket(key, limit.perMinute, limit.burst, now);
      if (waitMs > 0) throw errors.tooManyRequests(waitMs / 1000, message);
    }
    if (limit.perDay !== undefined && limit.perDay > 0) {
      const waitMs = await this.countToday(key, limit.perDay, now);
      if (waitMs > 0) throw errors.tooManyRequests(waitMs / 1000, message);
    }
  }

  /**
   * `consume` for a key too busy for one item (e.g. the static upload token: docs/CAPACITY.md): its limit
   * spread over buckets `<key>#<n>` (spreadLimit), one chosen at random per request.
   */
  async consumeSpread(key: string, limit: RateLimit, message?: string): Promise<void> {
    const spread = spreadLimit(limit);
    if (spread.count === 1) return this.consume(key, limit, message);
    return this.consume(`${key}#${Math.floor(Math.random() * spread.count)}`, spread.limit, message);
  }

  /** 0 when admitted, else milliseconds until the next request would be. */
  private async takeFromBucket(key: string, perMinute: number, burst: number | undefined, now: number) {
    const interval = Math.ceil(60_000 / perMinute);
    const tolerance = (Math.max(1, burst ?? Math.ceil(perMinute)) - 1) * interval;
    const itemKey = throttleKey(key, 'rate');
    // The item outlives its last admission by the tolerance plus one interval: then the bucket is full.
    for (let attempt = 0; attempt < 3; attempt++) {
      // Idle bucket (absent, or its TAT already passed): TAT = now + T.
      const idle = await this.deps.table
        .update(itemKey, {
          UpdateExpression: 'SET tat = :next, expires_at = :expires',
          ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
          ExpressionAttributeValues: {
            ':next': now + interval,
            ':now': now,
            ':expires': epochSeconds(new Date(now + interval + tolerance)) + 1,
          },
        })
        .then(() => true, conditionFailedReturns(false));
      if (idle) return 0;
      // Busy bucket: admitted while TAT - now <= tolerance; TAT moves on by T.
      const admitted = await this.deps.table
        .update(itemKey, {
          UpdateExpression: 'SET tat = tat + :interval, expires_at = :expires',
          ConditionExpression: 'tat >= :now AND tat <= :limit',
          ExpressionAttributeValues: {
            ':interval': interval,
            ':now': now,
            ':limit': now + tolerance + CLOCK_SKEW_MS,
            ':expires': epochSeconds(new Date(now + 2 * interval + 2 * tolerance)) + 1,
          },
        })
        .then(() => true, conditionFailedReturns(false));
      if (admitted) return 0;
      // Refused, or the item changed between the two updates: read how long to wait.
      const current = await this.deps.table.get<{ pk: string; sk: string; tat: number }>(itemKey);
      if (current && current.tat >= now) {
        const wait = current.tat - tolerance - CLOCK_SKEW_MS - now;
        if (wait > 0) return wait;
      }
      // The bucket emptied in between (or the item expired): try again.
    }
    return interval;
  }

  /** 0 when counted, else milliseconds until the next UTC day. */
  private async countToday(key: string, perDay: number, now: number) {
    const day = new Date(now).toISOString().slice(0, 10);
    const nextDay = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    return this.deps.table
      .update(throttleKey(key, `day#${day}`), {
        UpdateExpression: 'ADD #n :one SET expires_at = :expires',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
        ExpressionAttributeNames: { '#n': 'count' },
        ExpressionAttributeValues: { ':one': 1, ':max': perDay, ':expires': epochSeconds(new Date(nextDay)) },
      })
      .then(() => 0, conditionFailedReturns(nextDay - now));
  }
}
