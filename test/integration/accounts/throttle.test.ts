import { beforeAll, describe, expect, it } from 'vitest';
import { Throttle } from '#lib/accounts/throttle.ts';
import { AppError } from '#lib/core/errors.ts';
import { statusOf as httpStatusOf } from '#lib/http/errors.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

// Domain errors carry a name; the status is the edge's mapping of it.
const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: unknown) => (error instanceof AppError ? httpStatusOf(error) : 500),
  );

describe('the table-backed throttle', () => {
  it('keeps the burst for a request that read its clock just before the first one was admitted', async () => {
    // Prepare: two callers of one burst; the later clock reaches the table first (a race seen in the suite).
    const start = Date.now();
    const later = new Throttle({
      table: new Table(dynamoClient(config.aws), config.table_name, () => new Date(start + 5)),
    });
    const earlier = new Throttle({
      table: new Table(dynamoClient(config.aws), config.table_name, () => new Date(start)),
    });
    const third = new Throttle({
      table: new Table(dynamoClient(config.aws), config.table_name, () => new Date(start + 10)),
    });
    const key = `skew-${start}`;
    const limit = { perMinute: 1, burst: 2 };

    // Act + Assess: both places of the burst are given, and no third.
    expect(await statusOf(later.consume(key, limit))).toBe(200);
    expect(await statusOf(earlier.consume(key, limit))).toBe(200);
    expect(await statusOf(third.consume(key, limit))).toBe(429);
  });

  it('admits the burst, then one per interval, and holds across instances (restarts)', async () => {
    const clock = movableClock();
    const table = new Table(dynamoClient(config.aws), config.table_name, clock);
    const key = `generic-${Date.now()}`;
    const limit = { perMinute: 1, burst: 2 };
    const first = new Throttle({ table });
    expect(await statusOf(first.consume(key, limit))).toBe(200);
    expect(await statusOf(first.consume(key, limit))).toBe(200);
    // A new instance (another container, or after a restart) sees the same state.
    const second = new Throttle({ table });
    const refused = await second.consume(key, limit).catch((error) => error);
    expect(httpStatusOf(refused)).toBe(429);
    expect(refused.retryAfterSeconds).toBe(60);
    clock.advance(30_000);
    expect(await statusOf(second.consume(key, limit))).toBe(429);
    clock.advance(30_000);
    expect(await statusOf(second.consume(key, limit))).toBe(200);
    expect(await statusOf(second.consume(key, limit))).toBe(429);
  });

  it('admits exactly the burst of 10 concurrent requests and caps a day', async () => {
    const clock = movableClock(Date.UTC(2032, 0, 1, 12));
    const table = new Table(dynamoClient(config.aws), config.table_name, clock);
    const throttle = new Throttle({ table });
    const key = `concurrent-${Date.now()}`;
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        statusOf(throttle.consume(key, { perMinute: 1, burst: 2, perDay: 10 })),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(2);
    const daily = `daily-${Date.now()}`;
    const dayStatuses = await Promise.all(
      Array.from({ length: 12 }, () => statusOf(throttle.consume(daily, { perDay: 5 }))),
    );
    expect(dayStatuses.filter((status) => status === 200)).toHaveLength(5);
  });
});
