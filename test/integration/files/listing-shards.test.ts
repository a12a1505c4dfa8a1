// The listings of everything take no hot partition (docs/UPLOADS.md, "Partition keys"): files written
// spread their listing-index entries over listing_shards shards, and the gallery still reads them all.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FileItem, fileKey, newFileItem } from '#lib/files/files.ts';
import { config } from '#lib/platform/config/index.ts';
import { testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const FILES = 200;

beforeAll(async () => {
  await provisionTestStack();
});

describe('writing many files', () => {
  it('spreads their listing entries over the shards, none more than twice its fair share', async () => {
    // Prepare
    const { uploads, table } = testDeps();
    const owner = randomUUID();
    const start = Date.UTC(2025, 0, 1);

    // Act: every file written as an upload writes it (the record transaction, no quota reservation).
    const written: string[] = await Promise.all(
      Array.from({ length: FILES }, async (_, index) => {
        const id = randomUUID();
        const item = newFileItem({
          id,
          key: `2025/01/${id}.png`,
          filename: `${id}.png`,
          facts: {
            sha256: id.replaceAll('-', '').padEnd(64, '0'),
            size: 10,
            mimeType: 'image/png',
            ext: 'png',
            kind: 'png',
            width: 1,
            height: 1,
          },
          permission: 'public',
          ownerId: owner,
          ownerRole: 'user',
          now: new Date(start + index),
          originalName: `f${index}.png`,
          baseUrl: config.base_url,
          listingShards: uploads.files.listingShards,
        });
        await uploads.files.createDeduped(item);
        return id;
      }),
    );

    // Assess: the stored items' listing partitions.
    const stored = await Promise.all(written.map((id) => table.get<FileItem>(fileKey(id))));
    const perShard = new Map<string, number>();
    for (const item of stored) perShard.set(item!.gsi2pk!, (perShard.get(item!.gsi2pk!) ?? 0) + 1);
    const shards = config.listing_shards;
    expect([...perShard.keys()].every((partition) => /^gallery#public#\d+$/.test(partition))).toBe(true);
    expect(perShard.size).toBe(shards);
    expect(Math.max(...perShard.values())).toBeLessThanOrEqual((2 * FILES) / shards);

    const gallery: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await uploads.files.gallery({ limit: 100, ...(cursor ? { cursor } : {}) });
      gallery.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(gallery.filter((id) => written.includes(id))).toEqual([...written].reverse());
  });
});
