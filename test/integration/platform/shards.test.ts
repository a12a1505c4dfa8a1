import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '#lib/core/errors.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { readShards, type ShardedListing, shardOf, shardPartition } from '#lib/platform/db/shards.ts';
import { Table } from '#lib/platform/db/table.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const table = () => new Table(dynamoClient(config.aws), config.table_name);

/** Writes `count` items of a fresh listing with sort keys s0000.. in shuffled order; returns the listing. */
async function seeded(count: number, shards: number): Promise<{ listing: ShardedListing; keys: string[] }> {
  const listing: ShardedListing = { index: 'listing', name: `shards-test-${randomUUID()}`, count: shards };
  const keys = Array.from({ length: count }, (_, i) => `s${String(i).padStart(4, '0')}#${randomUUID()}`);
  await Promise.all(
    keys.map((key) =>
      table().put({
        pk: `shards-test#${key}`,
        sk: 'item',
        gsi2pk: shardPartition(listing, key),
        gsi2sk: key,
      }),
    ),
  );
  return { listing, keys };
}

async function readAll(listing: ShardedListing, limit: number, order: 'newest-first' | 'oldest-first') {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await readShards(table(), listing, { limit, cursor, order });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    seen.push(...page.items.map((item) => String(item.gsi2sk)));
    cursor = page.next_cursor ?? undefined;
    pages += 1;
  } while (cursor && pages < 100);
  return { seen, pages };
}

describe('listings spread over shards', () => {
  it('spreads ids evenly over the shards', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i += 1) counts[shardOf(randomUUID(), 16)] += 1;
    expect(Math.max(...counts)).toBeLessThan(1_200);
    expect(Math.min(...counts)).toBeGreaterThan(800);
  });

  it('reads every item once, newest first, page after page, whatever the page size', async () => {
    const { listing, keys } = await seeded(57, 8);
    for (const limit of [1, 7, 20, 100]) {
      const { seen, pages } = await readAll(listing, limit, 'newest-first');
      expect(seen).toEqual([...keys].sort().reverse());
      expect(pages).toBeLessThanOrEqual(Math.ceil(57 / limit) + 1);
    }
  });

  it('reads oldest first within bounds and by prefix', async () => {
    const { listing, keys } = await seeded(30, 4);
    const { seen } = await readAll(listing, 4, 'oldest-first');
    expect(seen).toEqual([...keys].sort());
    const prefixed = await readShards(table(), listing, { limit: 50, prefix: 's001', order: 'oldest-first' });
    expect(prefixed.items.map((item) => item.gsi2sk)).toEqual(keys.slice(10, 20));
    const bounded = await readShards(table(), listing, { limit: 50, to: 's0005', order: 'oldest-first' });
    expect(bounded.items.map((item) => item.gsi2sk)).toEqual(keys.slice(0, 5));
    expect(bounded.next_cursor).toBeNull();
  });

  it('refuses a cursor of another listing or a forged one with a 400', async () => {
    const first = await seeded(5, 2);
    const second = await seeded(5, 2);
    const page = await readShards(table(), first.listing, { limit: 2 });
    expect(page.next_cursor).not.toBeNull();
    for (const cursor of [page.next_cursor!, 'not-json', Buffer.from('[1,2,3]').toString('base64url')]) {
      const refused = await readShards(table(), second.listing, { limit: 2, cursor }).catch((error) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).errorName).toBe('bad_request');
    }
  });

  it('reads several listings of one index as one, in one order, with one cursor', async () => {
    const first = await seeded(13, 3);
    const second = await seeded(11, 3);
    const merged = { index: 'listing' as const, names: [first.listing.name, second.listing.name], count: 3 };
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await readShards(table(), merged, { limit: 4, cursor });
      seen.push(...page.items.map((item) => String(item.gsi2sk)));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...first.keys, ...second.keys].sort().reverse());
    const single = await readShards(table(), first.listing, { limit: 2 });
    const refused = await readShards(table(), merged, { limit: 2, cursor: single.next_cursor! }).catch(
      (error) => error,
    );
    expect((refused as AppError).errorName).toBe('bad_request');
  });

  it('refuses a cursor of another prefix with a 400, not a failed query', async () => {
    const { listing } = await seeded(20, 2);
    const page = await readShards(table(), listing, { limit: 2, prefix: 's001', order: 'oldest-first' });
    const refused = await readShards(table(), listing, {
      limit: 2,
      prefix: 's000',
      order: 'oldest-first',
      cursor: page.next_cursor!,
    }).catch((error) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).errorName).toBe('bad_request');
  });
});
