// The static token's quota buckets (lib/files/usage-buckets.ts) and rate items (spreadLimit): what each
// write asks of DynamoDB, so that together they never pass the quota or the rate.
import { describe, expect, it } from 'vitest';
import { spreadLimit } from '#lib/accounts/throttle.ts';
import { TOKEN_BUCKETS, type UsageItem } from '#lib/files/usage.ts';
import { tokenReserveItems } from '#lib/files/usage-buckets.ts';

const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const bucket = (n: number, fields: Partial<UsageItem>): UsageItem => ({
  pk: `usage#${ACCOUNT}#t${n}`,
  sk: `usage#t${n}`,
  account_id: ACCOUNT,
  ...fields,
});

describe('the static token’s quota buckets', () => {
  it('balances every bucket at once, sharing what is left after the upload, when none has room', () => {
    // The single item holds 100 bytes of uploads from before the buckets.
    const single: UsageItem = { pk: `usage#${ACCOUNT}`, sk: 'usage', account_id: ACCOUNT, used_bytes: 100 };

    const plan = tokenReserveItems(ACCOUNT, [single], 50, 1_000);

    expect(plan.items).toHaveLength(TOKEN_BUCKETS);
    const rooms = plan.items.map((item) => item.Update?.ExpressionAttributeValues?.[':room'] as number);
    // 1,000 - 100 - 50 = 850 shared: 107 for the first two, 106 for the rest.
    expect(rooms.reduce((sum, room) => sum + room, 0)).toBe(850);
    expect(Math.max(...rooms) - Math.min(...rooms)).toBeLessThanOrEqual(1);
    for (const item of plan.items) expect(item.Update?.ConditionExpression).toBe('attribute_not_exists(rev)');
    expect(plan.slot).toMatch(/^t[0-7]$/);
  });

  it('takes the bytes from one bucket with room, conditioned on that room and the quota it was balanced under', () => {
    const items = [
      bucket(0, { room: 10, quota: 1_000, rev: 3 }),
      bucket(1, { room: 90, quota: 1_000, rev: 2 }),
      bucket(2, { room: 500, quota: 2_000, rev: 1 }),
    ];

    const plan = tokenReserveItems(ACCOUNT, items, 50, 1_000);

    expect(plan.slot).toBe('t1');
    expect(plan.items).toHaveLength(1);
    expect(plan.items[0]?.Update).toMatchObject({
      Key: { pk: `usage#${ACCOUNT}#t1`, sk: 'usage#t1' },
      ConditionExpression: 'quota = :quota AND room >= :bytes',
      ExpressionAttributeValues: { ':bytes': 50, ':taken': -50, ':quota': 1_000 },
    });
  });
});

describe('a spread rate', () => {
  it('keeps one item for a small burst, and splits a large one into shares that never pass the whole', () => {
    expect(spreadLimit({ perMinute: 1, burst: 10 })).toEqual({
      count: 1,
      limit: { perMinute: 1, burst: 10 },
    });
    const spread = spreadLimit({ perMinute: 6_000, burst: 600, perDay: 1_000_001 });
    expect(spread.count).toBe(8);
    expect(spread.limit).toEqual({ perMinute: 750, burst: 75, perDay: 125_000 });
    expect(spreadLimit({ perMinute: 6_000, burst: 600, perDay: 3 }).count).toBe(3);
  });
});
