// The block list's perceptual hash (docs/MODERATION.md "The block list (never again)"): a copy resized,
// recompressed and stripped stays within MAX_BLOCK_DISTANCE of the original, unrelated images are far apart,
// a plain image is not informative, an animation is hashed by its first frame.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { MAX_BLOCK_DISTANCE } from '#lib/moderation/block-list.ts';
import { hammingDistance, perceptualHash } from '#lib/moderation/perceptual-hash.ts';
import { animatedGif, makePng, photoJpeg } from '#test/support/images.ts';
import { disguised, drawing } from '#test/support/moderation-images.ts';

describe('perceptualHash', () => {
  it('answers 64 bits as 16 lower-case hex digits, the same for the same bytes', async () => {
    const photo = await photoJpeg(1200, 900);
    const first = await perceptualHash(photo);
    expect(first.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(first.informative).toBe(true);
    expect(await perceptualHash(photo)).toEqual(first);
  });

  it('keeps a copy resized to 70 %, re-encoded as JPEG q=60 and stripped within MAX_BLOCK_DISTANCE', async () => {
    const originals = [
      await photoJpeg(1200, 900),
      await photoJpeg(640, 480),
      ...(await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => drawing(seed)))),
    ];
    for (const original of originals) {
      const copy = await disguised(original);
      expect((await sharp(copy).metadata()).exif).toBeUndefined();
      const [a, b] = await Promise.all([perceptualHash(original), perceptualHash(copy)]);
      expect(a.informative && b.informative).toBe(true);
      const distance = hammingDistance(a.hash, b.hash);
      expect(distance).toBeLessThanOrEqual(MAX_BLOCK_DISTANCE);
      // Each informative hash sets 31 of its 63 thresholded bits: distances are even.
      expect(distance % 2).toBe(0);
    }
  });

  it('keeps a PNG re-encoded as JPEG within MAX_BLOCK_DISTANCE', async () => {
    const png = await drawing(7);
    const jpeg = await sharp(png).jpeg({ quality: 60 }).toBuffer();
    const [a, b] = await Promise.all([perceptualHash(png), perceptualHash(jpeg)]);
    expect(hammingDistance(a.hash, b.hash)).toBeLessThanOrEqual(MAX_BLOCK_DISTANCE);
  });

  it('puts unrelated images more than 16 bits apart', async () => {
    // photoJpeg's seeds differ in one row of pixels only: the same picture, the same hash.
    const [seed0, seed7] = await Promise.all([photoJpeg(1200, 900, 0), photoJpeg(1200, 900, 7)]);
    expect(seed0.equals(seed7)).toBe(false);
    expect((await perceptualHash(seed0)).hash).toBe((await perceptualHash(seed7)).hash);
    // Other sizes draw another texture, and the drawings another layout each.
    const images = [
      seed0,
      await photoJpeg(640, 480),
      ...(await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => drawing(seed)))),
    ];
    const hashes = await Promise.all(images.map(async (image) => (await perceptualHash(image)).hash));
    for (let i = 0; i < hashes.length; i += 1) {
      for (let j = i + 1; j < hashes.length; j += 1) {
        expect(hammingDistance(hashes[i]!, hashes[j]!), `images ${i} and ${j}`).toBeGreaterThan(16);
      }
    }
  });

  it('tells a mirrored copy apart (what the hash does not catch)', async () => {
    const photo = await photoJpeg(1200, 900);
    const mirrored = await sharp(photo).flop().jpeg().toBuffer();
    const [a, b] = await Promise.all([perceptualHash(photo), perceptualHash(mirrored)]);
    expect(hammingDistance(a.hash, b.hash)).toBeGreaterThan(16);
  });

  it('calls a plain image not informative, whatever its colour or format', async () => {
    const plain = [
      makePng(400, 300, [120, 40, 200]),
      makePng(400, 300, [255, 255, 255]),
      await sharp(makePng(400, 300, [10, 200, 30]))
        .jpeg({ quality: 60 })
        .toBuffer(),
      // A faint gradient, and a dot on white: nearly uniform.
      await sharp(
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><defs><linearGradient id="g"><stop offset="0" stop-color="#f8f8f8"/><stop offset="1" stop-color="#fff"/></linearGradient></defs><rect width="400" height="300" fill="url(#g)"/></svg>',
        ),
      )
        .png()
        .toBuffer(),
      await sharp(
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#fff"/><circle cx="200" cy="150" r="6"/></svg>',
        ),
      )
        .png()
        .toBuffer(),
    ];
    for (const image of plain) expect((await perceptualHash(image)).informative).toBe(false);
    expect((await perceptualHash(await drawing(2))).informative).toBe(true);
  });

  it('hashes an animation by its first frame', async () => {
    // animatedGif's frames are one shape in other colours (a hash of likeness sees one picture): this GIF's
    // frames are two unrelated drawings.
    const [first, second] = await Promise.all(
      [1, 2].map((seed) => drawing(seed, 200, 150).then((png) => sharp(png).ensureAlpha().raw().toBuffer())),
    );
    const gif = await sharp(Buffer.concat([first!, second!]), {
      raw: { width: 200, height: 300, channels: 4, pageHeight: 150 },
    })
      .gif({ delay: [100, 100], loop: 0 })
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(2);
    const frame = async (pixels: Buffer) =>
      (
        await perceptualHash(
          await sharp(pixels, { raw: { width: 200, height: 150, channels: 4 } })
            .png()
            .toBuffer(),
        )
      ).hash;
    const animated = (await perceptualHash(gif)).hash;
    expect(hammingDistance(animated, await frame(first!))).toBeLessThanOrEqual(MAX_BLOCK_DISTANCE);
    expect(hammingDistance(animated, await frame(second!))).toBeGreaterThan(16);
    // The fixture's animation (flat frames) is hashed too, by its first frame alone.
    expect(await perceptualHash(await animatedGif(64, 48, 4))).toMatchObject({
      hash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
  });

  it('applies the EXIF orientation before hashing', async () => {
    const tagged = await sharp(await drawing(3))
      .jpeg({ quality: 90 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect((await sharp(tagged).metadata()).orientation).toBe(6);
    const upright = await sharp(tagged, { autoOrient: true }).jpeg({ quality: 90 }).toBuffer();
    const unturned = await sharp(tagged).jpeg({ quality: 90 }).toBuffer(); // the tag dropped, not applied
    const hash = (await perceptualHash(tagged)).hash;
    expect(hammingDistance(hash, (await perceptualHash(upright)).hash)).toBeLessThanOrEqual(
      MAX_BLOCK_DISTANCE,
    );
    expect(hammingDistance(hash, (await perceptualHash(unturned)).hash)).toBeGreaterThan(16);
  });

  it('refuses bytes that are no image (422), and hashes that are not 16 hex digits (400)', async () => {
    await expect(perceptualHash(Buffer.from('not an image'))).rejects.toMatchObject({
      errorName: 'unprocessable',
    });
    expect(() => hammingDistance('xyz', '0000000000000000')).toThrow(
      expect.objectContaining({ errorName: 'bad_request' }),
    );
    expect(hammingDistance('ffffffffffffffff', '0000000000000000')).toBe(64);
    expect(hammingDistance('8000000000000001', '0000000000000000')).toBe(2);
  });
});
