// The operator's block list of taken-down images (docs/MODERATION.md "The block list (never again)") on
// DynamoDB Local: an entry is found again by the hash of a disguised copy (resized, recompressed, stripped)
// through its index partitions and not by an unrelated image's; removed, it is gone, and a second removal
// is 404; the listing pages newest first over every shard; concurrent adds are each listed once.
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { type BlockEntry, BlockList, MAX_BLOCK_DISTANCE } from '#lib/moderation/block-list.ts';
import { hammingDistance, perceptualHash } from '#lib/moderation/perceptual-hash.ts';
import { config } from '#lib/platform/config/index.ts';
import { shardOf } from '#lib/platform/db/shards.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { photoJpeg } from '#test/support/images.ts';
import { testTable } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let now = Date.parse('2026-03-01T10:00:00.000Z');
const table = testTable(() => new Date(now));
const blocks = new BlockList({ table, shards: config.listing_shards });

beforeAll(async () => {
  await provisionTestStack();
});

const entry = (hash: string, reason?: string) => ({
  hash,
  file_id: randomUUID(),
  owner_id: randomUUID(),
  created_by: randomUUID(),
  ...(reason ? { reason } : {}),
});

/** Every entry of the list, page after page of `limit`. */
async function listAll(limit: number): Promise<{ items: BlockEntry[]; pages: number }> {
  const items: BlockEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await blocks.list({ limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
    pages += 1;
  } while (cursor && pages < 200);
  return { items, pages };
}

/** A hash `bits` bits away from `hash`: the lowest bit of each of the first `bits` hex digits flipped. */
function flipped(hash: string, bits: number): string {
  return [...hash]
    .map((digit, at) => (at < bits ? (Number.parseInt(digit, 16) ^ 1).toString(16) : digit))
    .join('');
}

describe('the block list', () => {
  it('finds a taken-down image by the hash of a resized, recompressed and stripped copy, not an unrelated one', async () => {
    const original = await photoJpeg(1200, 900);
    const copy = await sharp(original).resize(840).jpeg({ quality: 60 }).toBuffer();
    const unrelated = await photoJpeg(640, 480);
    const [blocked, disguised, other] = await Promise.all([original, copy, unrelated].map(perceptualHash));
    expect(blocked!.informative).toBe(true);
    const distance = hammingDistance(blocked!.hash, disguised!.hash);
    expect(distance).toBeGreaterThan(0); // the copy's hash differs: found by likeness, not by equality
    const added = await blocks.add(entry(blocked!.hash, 'taken down'));
    expect(added).toMatchObject({
      hash: blocked!.hash,
      reason: 'taken down',
      created_at: isoWithOffset(new Date(now)),
    });

    expect(await blocks.nearest(disguised!.hash, MAX_BLOCK_DISTANCE)).toEqual(added);
    expect(await blocks.nearest(disguised!.hash, distance - 1)).toBeUndefined();
    expect(await blocks.nearest(other!.hash, MAX_BLOCK_DISTANCE)).toBeUndefined();
  });

  it('finds an entry at every distance up to MAX_BLOCK_DISTANCE, whichever pieces the bits fall in, and the closest first', async () => {
    const base = '0123456789abcdef';
    const exact = await blocks.add(entry(base));
    for (let bits = 1; bits <= MAX_BLOCK_DISTANCE; bits += 1) {
      // One bit flipped in each of `bits` pieces (10 bits from the top, then 9 each): only
      // MAX_BLOCK_DISTANCE + 1 - bits pieces are left equal, at least one.
      const mask = [0, 9, 18, 27, 36, 45, 54]
        .slice(0, bits)
        .reduce((all, at) => all | (1n << BigInt(at)), 0n);
      const probe = (BigInt(`0x${base}`) ^ mask).toString(16).padStart(16, '0');
      expect(hammingDistance(probe, base)).toBe(bits);
      expect(await blocks.nearest(probe, MAX_BLOCK_DISTANCE), `${bits} bits`).toEqual(exact);
      expect(await blocks.nearest(probe, bits - 1), `${bits} bits`).toBeUndefined();
    }
    await blocks.remove(exact.id);
    const far = await blocks.add(entry(flipped(base, 3)));
    const near = await blocks.add(entry(flipped(base, 1)));
    expect((await blocks.nearest(base, MAX_BLOCK_DISTANCE))?.id).toBe(near.id);
    expect((await blocks.nearest(flipped(base, 4), MAX_BLOCK_DISTANCE))?.id).toBe(far.id);
    await Promise.all([blocks.remove(far.id), blocks.remove(near.id)]);
  });

  it('forgets a removed entry; a second removal, or an unknown id, is not found', async () => {
    const hash = 'fedcba9876543210';
    const added = await blocks.add(entry(hash));
    expect(await blocks.nearest(hash, 0)).toEqual(added);
    await blocks.remove(added.id);
    expect(await blocks.nearest(hash, MAX_BLOCK_DISTANCE)).toBeUndefined();
    expect((await listAll(100)).items.map((item) => item.id)).not.toContain(added.id);
    // Its index items went with it, in the same transaction.
    expect(
      await table.query({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'blockhash#0#3fb' },
      }),
    ).toEqual({ items: [] });
    await expect(blocks.remove(added.id)).rejects.toMatchObject({ errorName: 'not_found' });
    await expect(blocks.remove(randomUUID())).rejects.toMatchObject({ errorName: 'not_found' });
    await expect(blocks.remove('block#../x')).rejects.toMatchObject({ errorName: 'not_found' });
  });

  it('of two concurrent removals of one entry, one succeeds and the other is not found', async () => {
    const added = await blocks.add(entry('0f0f0f0f0f0f0f0f'));
    const outcomes = await Promise.allSettled([blocks.remove(added.id), blocks.remove(added.id)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({
      reason: { errorName: 'not_found' },
    });
  });

  it('refuses a hash that is not 16 hex digits and a distance past MAX_BLOCK_DISTANCE (400)', async () => {
    await expect(blocks.add(entry('not-a-hash'))).rejects.toMatchObject({ errorName: 'bad_request' });
    await expect(blocks.nearest('0123', 1)).rejects.toMatchObject({ errorName: 'bad_request' });
    await expect(blocks.nearest('0123456789abcdef', MAX_BLOCK_DISTANCE + 1)).rejects.toMatchObject({
      errorName: 'bad_request',
    });
  });

  it('lists newest first across shards with a cursor; a forged cursor is 400', async () => {
    const before = (await listAll(100)).items.length;
    const added: BlockEntry[] = [];
    for (let i = 0; i < 23; i += 1) {
      now += 1000;
      added.push(await blocks.add(entry(randomHash())));
    }
    expect(new Set(added.map((item) => shardOf(item.id, config.listing_shards))).size).toBeGreaterThan(4);
    const { items, pages } = await listAll(5);
    expect(items).toHaveLength(before + 23);
    expect(pages).toBeGreaterThanOrEqual(5);
    expect(items.slice(0, 23)).toEqual([...added].reverse());
    const times = items.map((item) => item.created_at);
    expect(times).toEqual([...times].sort().reverse());
    await expect(
      blocks.list({
        limit: 5,
        cursor: Buffer.from(JSON.stringify(['gallery#public', 'x', []])).toString('base64url'),
      }),
    ).rejects.toMatchObject({ errorName: 'bad_request' });
    await expect(blocks.list({ limit: 101 })).rejects.toMatchObject({ errorName: 'bad_request' });
    await expect(blocks.list({ limit: 5, cursor: 'not a cursor' })).rejects.toMatchObject({
      errorName: 'bad_request',
    });
  });

  it('lists each of 20 concurrent adds once', async () => {
    const before = new Set((await listAll(100)).items.map((item) => item.id));
    const added = await Promise.all(Array.from({ length: 20 }, () => blocks.add(entry(randomHash()))));
    const { items } = await listAll(7);
    const fresh = items.filter((item) => !before.has(item.id)).map((item) => item.id);
    expect(fresh.sort()).toEqual(added.map((item) => item.id).sort());
    for (const item of added) expect(await blocks.nearest(item.hash, 0)).toEqual(item);
  });
});

function randomHash(): string {
  return randomUUID().replaceAll('-', '').slice(0, 16);
}
