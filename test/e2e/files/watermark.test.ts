// Watermarks by plan and f=auto's choice, as a viewer meets them through the local server playing the CDN
// (docs/IMAGES.md "Watermarks", "f=auto"): a watermarking plan's owner's renditions and original carry the
// mark (a pixel region compared with the same photo of an owner without the plan), smaller renditions
// than the mark's minimum do not; f=auto answers the smallest of the formats the viewer accepts.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newFilenameSuffix, storageKey, storedFilename } from '#lib/files/names.ts';
import { loadSharp } from '#lib/files/sharp.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testStorage } from '#test/support/deps.ts';
import { photoJpeg } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { signedQuery } from '#test/support/signed-renditions.ts';

const app = useLocalApp();
let admin: TestAccount;
let marked: TestAccount;
let plain: TestAccount;

const MIN_SIZE = 500;
const api = (method: string, path: string, who: TestAccount, body?: object) =>
  app.api(method, path, { headers: who.headers, body });

/** Uploads the photo as `who`: the path of its original. */
async function upload(who: TestAccount, photo: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'photo.jpg');
  const uploaded = await app.request('POST', '/api/v1/upload', { headers: who.headers, body: form });
  expect(uploaded.status).toBe(200);
  return new URL((uploaded.body as { data: { url: string } }).data.url).pathname;
}

async function fetched(path: string, accept = '*/*') {
  const response = await fetch(`${app.url}${path}`, { headers: { accept } });
  expect(response.status, path).toBe(200);
  return { type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
}

/** The mean absolute difference of two images' pixels in a region given as fractions of their size. */
async function difference(a: Buffer, b: Buffer, region: { x: number; y: number; w: number; h: number }) {
  const sharp = await loadSharp();
  const pixels = async (image: Buffer) => {
    const { width = 0, height = 0 } = await sharp(image).metadata();
    const box = {
      left: Math.round(region.x * width),
      top: Math.round(region.y * height),
      width: Math.round(region.w * width),
      height: Math.round(region.h * height),
    };
    return sharp(image).removeAlpha().extract(box).raw().toBuffer();
  };
  const [one, two] = await Promise.all([pixels(a), pixels(b)]);
  expect(one.length).toBe(two.length);
  let total = 0;
  for (let at = 0; at < one.length; at++) total += Math.abs(one[at]! - two[at]!);
  return total / one.length;
}

const CORNER = { x: 0.7, y: 0.8, w: 0.28, h: 0.18 };
const OPPOSITE = { x: 0.02, y: 0.02, w: 0.3, h: 0.3 };

beforeAll(async () => {
  [admin, marked, plain] = await Promise.all([
    createTestAccount({ role: 'admin' }),
    createTestAccount(),
    createTestAccount(),
  ]);
  const plan = await api('POST', '/api/v1/admin/plans', admin, {
    name: `Marked ${randomUUID().slice(0, 8)}`,
    amount_cents: 500,
    quota_bytes: 50_000_000,
    duration_days: 30,
    watermark: { text: 'SAMPLE', position: 'bottom-right', opacity: 1, min_size: MIN_SIZE },
  });
  expect(plan.status).toBe(201);
  expect(plan.data.watermark).toMatchObject({ text: 'SAMPLE', position: 'bottom-right' });
  const order = await api('POST', '/api/v1/orders', marked, { plan_id: plan.data.id, provider: 'mock' });
  expect((await fetch(app.at(order.data.pay_url), { method: 'POST' })).status).toBe(200);
}, 60_000);

describe('watermarks by plan', () => {
  it("marks a watermarking plan's owner's renditions and original, not another owner's, nor small renditions", async () => {
    const photo = await photoJpeg(800, 600, 41);
    const [markedPath, plainPath] = await Promise.all([upload(marked, photo), upload(plain, photo)]);

    // A rendition over the minimum size: the corner differs from the other owner's, the rest does not.
    const [markedSmall, plainSmall] = await Promise.all([
      fetched(`${markedPath}?p=small`),
      fetched(`${plainPath}?p=small`),
    ]);
    expect(await difference(markedSmall.body, plainSmall.body, CORNER)).toBeGreaterThan(20);
    expect(await difference(markedSmall.body, plainSmall.body, OPPOSITE)).toBeLessThan(5);

    // Below the minimum size (the 480-wide thumbnail): unmarked.
    const [markedThumb, plainThumb] = await Promise.all([
      fetched(`${markedPath}?p=thumb`),
      fetched(`${plainPath}?p=thumb`),
    ]);
    expect(await difference(markedThumb.body, plainThumb.body, CORNER)).toBeLessThan(2);

    // The original URL: the marked owner's answers the marked image, the other owner's the stored bytes.
    const [markedOriginal, plainOriginal] = await Promise.all([fetched(markedPath), fetched(plainPath)]);
    expect(markedOriginal.type).toBe('image/jpeg');
    expect(await difference(markedOriginal.body, photo, CORNER)).toBeGreaterThan(20);
    expect(await difference(markedOriginal.body, photo, OPPOSITE)).toBeLessThan(5);
    expect(await difference(plainOriginal.body, photo, CORNER)).toBeLessThan(1);
  });
});

/** A JPEG stored as uploaded (no owner's rules), its path. */
async function stored(photo: Buffer): Promise<string> {
  const key = storageKey(new Date(), storedFilename(randomUUID(), newFilenameSuffix(randomUUID()), 'jpg'));
  await testStorage().put(key, photo, 'image/jpeg');
  return `/i/${key}`;
}

/** Each candidate of f=auto, asked explicitly (q=75: AVIF encoded at 50, WebP and JPEG at 75). */
async function candidates(path: string, width: number) {
  const key = path.slice(3);
  const [avif, webp, jpeg] = await Promise.all(
    ['avif', 'webp', 'jpeg'].map(async (format) => {
      const query = signedQuery(key, `w=${width}&f=${format}`);
      return (await fetched(`${path}?${query}`)).body.length;
    }),
  );
  return { avif: avif!, webp: webp!, jpeg: jpeg! };
}

const auto = (path: string, width: number, accept: string) =>
  fetched(`${path}?${signedQuery(path.slice(3), `w=${width}&f=auto`)}`, accept);

describe('f=auto', () => {
  it('answers WebP where it is smaller than AVIF, and never a format the viewer does not accept', async () => {
    const path = await stored(await photoJpeg(64, 48, 7));
    // Rendered first for f=auto (every candidate at once), then each candidate asked alone.
    const both = await auto(path, 64, 'image/avif,image/webp,image/*,*/*;q=0.8');
    const sizes = await candidates(path, 64);
    expect(sizes.webp).toBeLessThan(sizes.avif);
    expect(both.type).toBe('image/webp');
    expect(both.body.length).toBe(Math.min(sizes.avif, sizes.webp, sizes.jpeg));

    const webpOnly = await auto(path, 64, 'image/webp,*/*');
    expect(webpOnly.type).toBe('image/webp');
    expect(webpOnly.body.length).toBe(Math.min(sizes.webp, sizes.jpeg));

    const neither = await auto(path, 64, 'image/png,image/*;q=0.8');
    expect(neither.type).toBe('image/jpeg');
  });

  it('answers AVIF where it is the smallest, and JPEG or WebP to a viewer without AVIF', async () => {
    const path = await stored(await photoJpeg(960, 640, 8));
    const both = await auto(path, 960, 'image/avif,image/webp,*/*');
    const sizes = await candidates(path, 960);
    expect(sizes.avif).toBeLessThan(Math.min(sizes.webp, sizes.jpeg));
    expect(both.type).toBe('image/avif');
    expect(both.body.length).toBe(sizes.avif);

    const webpOnly = await auto(path, 960, 'image/webp,*/*');
    expect(webpOnly.type).not.toBe('image/avif');
    expect(webpOnly.body.length).toBe(Math.min(sizes.webp, sizes.jpeg));
  });
});
