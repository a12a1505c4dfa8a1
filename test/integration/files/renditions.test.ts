// Renditions end to end (docs/IMAGES.md): real images uploaded through the upload handler, their renditions
// asked of the render handler as the CDN asks it, the answers decoded with sharp; stored once in the bucket
// (s3rver), served from the stored copy, deleted with their file.
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, buildRenditions } from '#lib/files/build-renditions.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { renditionPrefixOf, renditionQueryOf } from '#lib/files/rendition-query.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testStorage } from '#test/support/deps.ts';
import {
  animatedGif,
  decompressionBombPng,
  images,
  jpegWithOrientation6AndGps,
  photoAvif,
  photoWebp,
  pngWithAlpha,
} from '#test/support/images.ts';
import { testTable } from '#test/support/resources.ts';
import { signedQuery } from '#test/support/signed-renditions.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callImage, callUpload, uploadInput } from './helpers.ts';

let user: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  user = await createTestAccount();
});

const CONTENT_TYPES = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
} as const;

async function upload(
  bytes: Buffer,
  kind: keyof typeof CONTENT_TYPES,
  permission = 'private',
): Promise<UploadRecord> {
  const { status, body } = await callUpload<UploadRecord>(
    uploadInput(user.headers, { bytes, filename: `picture.${kind}`, contentType: CONTENT_TYPES[kind] }, [
      { name: 'permission', data: permission },
    ]),
  );
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
  json: { code: number; message: string; data: unknown } | undefined;
}

/** The rendition of `key` the query names, signed (test/support/signed-renditions.ts). */
async function get(key: string, query: string, headers: Record<string, string> = {}): Promise<Answer> {
  const signed = signedQuery(key, query);
  const result = await callImage({ path: `/i/${key}${signed ? `?${signed}` : ''}`, headers });
  const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  const responseHeaders = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
  const json = responseHeaders['content-type']?.startsWith('application/json')
    ? (JSON.parse(bytes.toString('utf8')) as Answer['json'])
    : undefined;
  return { status: result.statusCode ?? 0, headers: responseHeaders, bytes, json };
}

describe('a rendition', () => {
  it('is the thumbnail every record names: oriented, no larger than the original, without metadata', async () => {
    // Stored 60 wide and 40 high, displayed (orientation 6) 40 wide and 60 high.
    const record = await upload(await jpegWithOrientation6AndGps(60, 40), 'jpeg');
    expect(record.thumbnail).toBe(`${record.url}?p=thumb`);

    const answer = await get(record.key, new URL(record.thumbnail!).search.slice(1));

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(answer.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(answer.headers.vary).toBeUndefined();
    const decoded = await sharp(answer.bytes).metadata();
    expect([decoded.format, decoded.width, decoded.height]).toEqual(['webp', 40, 60]);
    expect(decoded.exif).toBeUndefined();
    expect(decoded.xmp).toBeUndefined();
    expect(decoded.orientation).toBeUndefined();
  });

  it('takes w, h, fit and f, and keeps alpha where the format has it', async () => {
    const record = await upload(await pngWithAlpha(64, 32), 'png');

    const square = await get(record.key, 'w=16&h=16&fit=cover&f=png');
    const webp = await get(record.key, 'w=32&f=webp');
    const jpeg = await get(record.key, 'w=32&f=jpeg');

    expect(await sharp(square.bytes).metadata()).toMatchObject({ format: 'png', width: 16, height: 16 });
    expect(await sharp(webp.bytes).metadata()).toMatchObject({ format: 'webp', width: 32, height: 16 });
    expect((await sharp(webp.bytes).metadata()).hasAlpha).toBe(true);
    expect(jpeg.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(jpeg.bytes).metadata()).hasAlpha).toBe(false);
  });

  it('keeps an animation in WebP and shows the first frame in PNG', async () => {
    const record = await upload(await animatedGif(32, 32, 4), 'gif');

    const animated = await sharp((await get(record.key, 'w=16&f=webp')).bytes, { pages: -1 }).metadata();
    const still = await sharp((await get(record.key, 'w=16&f=png')).bytes, { pages: -1 }).metadata();

    expect([animated.format, animated.pages]).toEqual(['webp', 4]);
    expect([still.format, still.pages ?? 1]).toEqual(['png', 1]);
  });

  it('reads WebP and AVIF originals', async () => {
    const [webp, avif] = await Promise.all([
      upload(await photoWebp(48, 32), 'webp'),
      upload(await photoAvif(48, 32), 'avif'),
    ]);

    for (const record of [webp, avif]) {
      const answer = await get(record.key, 'w=16&f=jpeg');
      expect(answer.status).toBe(200);
      expect(await sharp(answer.bytes).metadata()).toMatchObject({ format: 'jpeg', width: 16 });
    }
    // Without f, the original's format.
    const same = await get(avif.key, 'w=16');
    expect(same.headers['content-type']).toBe('image/avif');
  });

  it('picks the smallest format the viewer accepts for f=auto, and only then varies by it', async () => {
    const record = await upload(await photoWebp(48, 32), 'webp');
    const jpegRecord = await upload(await jpegWithOrientation6AndGps(30, 20), 'jpeg');

    const both = await get(record.key, 'w=16&f=auto', { accept: 'image/avif,image/webp,*/*' });
    const webp = await get(jpegRecord.key, 'w=16&f=auto', { accept: 'image/webp,*/*' });
    const neither = await get(jpegRecord.key, 'w=16&f=auto', { accept: '*/*' });
    // The candidates asked for by name: f=auto answers the smallest of those accepted (docs/IMAGES.md).
    const sizes = await Promise.all(
      ['avif', 'webp'].map(async (format) => (await get(record.key, `w=16&f=${format}`)).bytes.length),
    );

    expect(['image/avif', 'image/webp']).toContain(both.headers['content-type']);
    expect(both.headers.vary).toBe('Accept');
    expect(both.bytes.length).toBe(Math.min(...sizes));
    expect(webp.headers.vary).toBe('Accept');
    expect(['image/webp', 'image/jpeg']).toContain(webp.headers['content-type']);
    expect([neither.headers['content-type'], neither.headers.vary]).toEqual(['image/jpeg', 'Accept']);
    expect((await sharp(both.bytes).metadata()).format).toBe(
      both.headers['content-type'] === 'image/avif' ? 'heif' : 'webp',
    );
  });
});

describe('rendered once', () => {
  it('refreshes the date of a stored rendition served after half images.derived_ttl_days (the lifecycle counts from it)', async () => {
    // Wider than the thumb preset (480): its own stored copy, not the original's size (read with the table).
    const record = await upload(await photoWebp(600, 400), 'webp');
    await get(record.key, 'p=thumb');
    const [stored] = await bucketKeys(renditionPrefixOf(record.key));
    const dateOf = async () =>
      (
        await s3Client(config.aws).send(
          new HeadObjectCommand({ Bucket: config.bucket_name, Key: objectKeyOf(stored ?? '') }),
        )
      ).LastModified!;
    const before = await dateOf();
    await new Promise((wait) => setTimeout(wait, 1100)); // the stored date counts whole seconds

    let now = new Date();
    const renditions = buildRenditions({
      storage: testStorage(),
      // The owner's mark (lib/files/owner-marks.ts) is read from the table before the stored copy is named.
      table: async () => testTable(),
      images: config.images,
      renderer: buildRenderer(config.images),
      signingSecrets: async () => [],
      clock: () => now,
    });
    const serve = () =>
      renditions.serve({ key: record.key, query: renditionQueryOf('p=thumb'), accept: undefined });

    expect((await serve()).kind).toBe('bytes'); // within the half: left as it is
    expect(await dateOf()).toEqual(before);
    now = new Date(Date.now() + (config.images.derived_ttl_days / 2 + 1) * 24 * 60 * 60 * 1000);
    expect((await serve()).kind).toBe('bytes');
    expect((await dateOf()).getTime()).toBeGreaterThan(before.getTime());
    expect(await bucketKeys(renditionPrefixOf(record.key))).toEqual([stored]);
  });

  it('stores one copy per normalized query, and serves the stored copy from then on', async () => {
    const record = await upload(await photoWebp(64, 48), 'webp');
    const prefix = renditionPrefixOf(record.key);

    const first = await get(record.key, 'w=32&f=jpeg');
    const respelled = await get(record.key, 'f=jpeg&q=75&fit=inside&w=32');
    const stored = await bucketKeys(prefix);

    expect(first.status).toBe(200);
    expect(respelled.bytes.equals(first.bytes)).toBe(true);
    expect(respelled.headers.etag).toBe(first.headers.etag);
    expect(stored).toHaveLength(1);

    // The stored copy, not a new render: replace it and the next answer is the replacement.
    const replacement = await sharp({
      create: { width: 7, height: 5, channels: 3, background: { r: 0, g: 255, b: 0 } },
    })
      .jpeg()
      .toBuffer();
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(stored[0] ?? ''),
        Body: replacement,
        ContentType: 'image/jpeg',
      }),
    );
    const later = await get(record.key, 'w=32&f=jpeg');
    expect(later.bytes.equals(replacement)).toBe(true);
  });

  it('stores a size at or over the original as one copy of the original size, whatever asked it', async () => {
    // An original 300 wide (narrower than every preset but thumb's 480).
    const record = await upload(await photoWebp(300, 200), 'webp');
    const prefix = renditionPrefixOf(record.key);

    const answers = [
      await get(record.key, 'w=1920&f=webp'),
      await get(record.key, 'w=3840&f=webp'),
      await get(record.key, 'w=1920&h=1920&fit=outside&f=webp'),
      await get(record.key, 'p=large'),
      await get(record.key, 'p=thumb'),
      // Asked again (the CDN missing elsewhere): the copy is found, not rendered again.
      await get(record.key, 'w=2560&f=webp'),
    ];
    const sizes = await Promise.all(answers.map((answer) => sharp(answer.bytes).metadata()));
    const stored = await bucketKeys(prefix);

    expect(answers.map((answer) => answer.status)).toEqual(Array(answers.length).fill(200));
    expect(sizes.map(({ width, height }) => `${width}x${height}`)).toEqual(
      Array(answers.length).fill('300x200'),
    );
    expect(new Set(answers.map((answer) => answer.headers.etag)).size).toBe(1);
    expect(stored).toEqual([`${prefix}w=0&h=0&fit=inside&q=75&f=webp`]);
    // A box the original does not fill on one side, or a crop, is its own rendition.
    expect((await get(record.key, 'w=1920&h=128&f=webp')).status).toBe(200);
    expect((await get(record.key, 'w=1920&h=1920&fit=cover&f=webp')).status).toBe(200);
    expect(await bucketKeys(prefix)).toHaveLength(3);
  });

  it('renders concurrent first requests into one stored copy, every answer the same image', async () => {
    const record = await upload(await photoWebp(80, 60), 'webp');

    const answers = await Promise.all(Array.from({ length: 8 }, () => get(record.key, 'w=48&f=png')));

    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((answer) => answer.bytes.toString('base64'))).size).toBe(1);
    expect(await bucketKeys(renditionPrefixOf(record.key))).toHaveLength(1);
  });

  it('deletes every rendition with its file, and answers 404 for them after', async () => {
    // (Sizes differ between tests: the same bytes uploaded again are the same record.)
    const record = await upload(await photoWebp(66, 50), 'webp');
    await get(record.key, 'w=16');
    await get(record.key, 'w=32&f=png');
    expect(await bucketKeys(renditionPrefixOf(record.key))).toHaveLength(2);

    // Deleted for good: to the trash, then out of it (docs/UPLOADS.md "Trash").
    await callUpload({ method: 'DELETE', path: `/api/v1/files/${record.id}`, headers: user.headers });
    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/trash/${record.id}`,
      headers: user.headers,
    });

    expect(deleted.status).toBe(200);
    expect(await bucketKeys(renditionPrefixOf(record.key))).toEqual([]);
    expect((await get(record.key, 'w=16')).status).toBe(404);
  });
});

describe('what is refused', () => {
  it('answers 400 naming a bad or repeated parameter or an unknown preset, and stores nothing', async () => {
    const record = await upload(await photoWebp(32, 24), 'webp');

    const cases: Array<[string, string]> = [
      ['w=500', 'w: must be one of'],
      ['w=0480', 'w: must be one of'],
      ['h=-1', 'h: must be one of'],
      ['fit=crop', 'fit: must be one of inside, cover, contain, outside, fill'],
      ['q=80', 'q: must be one of 50, 75, 90, 100'],
      ['f=tiff', 'f: must be one of jpeg, png, webp, avif, auto'],
      ['p=huge', 'p: there is no preset named huge'],
      ['w=480&w=640', 'w: is given more than once'],
    ];
    for (const [query, message] of cases) {
      const answer = await get(record.key, query);
      expect([answer.status, answer.json?.code], query).toEqual([400, 400]);
      expect(answer.json?.message, query).toContain(message);
    }
    // A parameter that is no rendition's is dropped, as the edge drops it: the original.
    expect((await get(record.key, 'width=480')).status).toBe(200);
    expect(await bucketKeys(renditionPrefixOf(record.key))).toEqual([]);
  });

  it('answers 404 for a key that is not a stored file', async () => {
    const answer = await get('2026/11/25/00000000-0000-4000-8000-000000000000-abababababab.png', 'w=16');
    expect([answer.status, answer.json?.message]).toEqual([404, 'file: not found']);
    expect((await get('incoming/2026/11/25/x.png', 'w=16')).status).toBe(404);
  });

  it('answers 415 naming the type for a BMP, whose record has no thumbnail; the original is still served', async () => {
    const record = await upload(images.bmp.bytes, 'bmp');
    expect(record.thumbnail).toBeNull();

    const answer = await get(record.key, 'w=16');

    expect(answer.status).toBe(415);
    expect(answer.json?.message).toContain('image/bmp');
    const original = await get(record.key, '');
    expect(original.status).toBe(200);
    expect(original.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  });

  it('answers 422 for a decompression bomb, before decoding it', async () => {
    const record = await upload(await decompressionBombPng(), 'png');
    expect([record.width, record.height]).toEqual([20_000, 20_000]);

    const answer = await get(record.key, 'w=16');

    expect(answer.status).toBe(422);
    expect(answer.json?.message).toBe('image: 400000000 pixels is over the limit of 50000000');
    expect(await bucketKeys(renditionPrefixOf(record.key))).toEqual([]);
  });
});
