import { beforeAll, describe, expect, it } from 'vitest';
import {
  ConditionFailedError,
  decodeCursor,
  encodeCursor,
  epochSeconds,
  type Table,
} from '#lib/platform/db/table.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let table: Table;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
});

describe('repository base on DynamoDB Local', () => {
  it('turns a failed putNew condition into ConditionFailedError, and only one of many concurrent writes wins', async () => {
    const key = { pk: 'claim#race', sk: 'claim' };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) => table.putNew({ ...key, owner: `writer-${n}` })),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    for (const outcome of lost)
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(ConditionFailedError);
    expect((lost[0] as PromiseRejectedResult).reason.errorName).toBe('conflict');
  });

  it('names the transaction items whose condition failed and writes none of them', async () => {
    await table.putNew({ pk: 'tx#taken', sk: 'x' });
    const error = await table
      .transact([
        { Put: { Item: { pk: 'tx#free', sk: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { Item: { pk: 'tx#taken', sk: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConditionFailedError);
    expect((error as ConditionFailedError).failedItems).toEqual([1]);
    expect(await table.get({ pk: 'tx#free', sk: 'x' })).toBeUndefined();
  });

  it('treats an item past its expires_at as absent, and lets putNew replace it', async () => {
    const key = { pk: 'code#old', sk: 'code' };
    await table.put({ ...key, expires_at: epochSeconds(new Date()) - 5, value: 'stale' });
    expect(await table.get(key)).toBeUndefined();
    await table.putNew({ ...key, expires_at: epochSeconds(new Date()) + 600, value: 'fresh' });
    expect(await table.get(key)).toMatchObject({ value: 'fresh' });
    const { items } = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': key.pk },
    });
    expect(items).toHaveLength(1);
  });

  it('maps a failed conditional update to ConditionFailedError', async () => {
    const key = { pk: 'counter#x', sk: 'c' };
    await table.put({ ...key, n: 0 });
    const bump = () =>
      table.update(key, {
        UpdateExpression: 'ADD n :one',
        ConditionExpression: 'n < :max',
        ExpressionAttributeValues: { ':one': 1, ':max': 2 },
      });
    const outcomes = await Promise.allSettled([bump(), bump(), bump(), bump(), bump()]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    expect(await table.get(key)).toMatchObject({ n: 2 });
  });

  it('round-trips pagination cursors and rejects forged ones with a 400', () => {
    const shape = { pk: 'a', sk: /^b/ };
    const lastKey = { pk: 'a', sk: 'b' };
    expect(decodeCursor(encodeCursor(lastKey) ?? undefined, shape)).toEqual(lastKey);
    for (const forged of [
      'not-a-cursor',
      encodeCursor({ pk: 'a' }),
      encodeCursor({ pk: 'other', sk: 'b' }),
      encodeCursor({ pk: 'a', sk: 'c' }),
      encodeCursor({ pk: 'a', sk: 'b', extra: 'x' }),
      encodeCursor({ pk: 'a', sk: `b${'é'.repeat(600)}` }),
    ]) {
      expect(() => decodeCursor(forged ?? undefined, shape), String(forged)).toThrowError(
        expect.objectContaining({ errorName: 'bad_request' }),
      );
    }
  });
});
