// Where a key's bytes sit in the bucket (lib/platform/storage/object-keys.ts): keys of the current layout
// under one of 256 prefixes, their renditions and presigned uploads beside them; older keys where they were.
import { describe, expect, it } from 'vitest';
import { expiryMark, newFilenameSuffix, ownerTagOf, storageKey, storedFilename } from '#lib/files/names.ts';
import { incomingKey, trashKey } from '#lib/files/prefixes.ts';
import { renditionKeyOf, renditionPrefixOf } from '#lib/files/rendition-query.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';

const id = '0b9c6f1e-2d3a-4c5b-8e7f-9a0b1c2d3e4f';
const tag = ownerTagOf('owner-1');
const spread = `2026/11/29/${id}-c4${'ab'.repeat(6)}${tag}.png`;

describe('objectKeyOf', () => {
  it('stores a key of the current layout under its first two random digits, its renditions and upload beside it', () => {
    expect(objectKeyOf(spread)).toBe(`c4/${spread}`);
    expect(objectKeyOf(renditionPrefixOf(spread))).toBe(`derived/c4/${spread}/`);
    expect(objectKeyOf(renditionKeyOf(spread, { width: 480, fit: 'inside', quality: 75 }, 'webp'))).toBe(
      `derived/c4/${spread}/w=480&h=0&fit=inside&q=75&f=webp`,
    );
    expect(objectKeyOf(incomingKey(spread))).toBe(`incoming/c4/${spread}`);
    expect(objectKeyOf(trashKey(spread))).toBe(`trash/c4/${spread}`);
    // An expiring file's key, its end after the suffix, is placed alike.
    const expiring = spread.replace('.png', `${expiryMark(1_795_000_000)}.png`);
    expect(objectKeyOf(expiring)).toBe(`c4/${expiring}`);
    expect(objectKeyOf(renditionPrefixOf(expiring))).toBe(`derived/c4/${expiring}/`);
  });

  it('leaves keys stored before where they are: 12 random digits, with or without a tag', () => {
    for (const key of [
      `2026/11/28/${id}-${'ab'.repeat(6)}${tag}.png`,
      `2026/11/28/${id}-${'ab'.repeat(6)}.png`,
    ]) {
      expect(objectKeyOf(key)).toBe(key);
      expect(objectKeyOf(renditionPrefixOf(key))).toBe(renditionPrefixOf(key));
    }
    expect(objectKeyOf('cdn/E2ABC.2026-11-29-10.log.gz')).toBe('cdn/E2ABC.2026-11-29-10.log.gz');
  });

  it('spreads new keys over the 256 prefixes evenly', () => {
    const counts = new Map<string, number>();
    for (let n = 0; n < 25_600; n++) {
      const key = storageKey(
        new Date('2026-11-29T00:00:00Z'),
        storedFilename(id, newFilenameSuffix(`o${n}`), 'png'),
      );
      const prefix = objectKeyOf(key).slice(0, 3);
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
    expect(counts.size).toBe(256);
    // An even share is 100 each; chance keeps every prefix within about five standard deviations of it.
    expect(Math.max(...counts.values())).toBeLessThan(150);
  });
});
