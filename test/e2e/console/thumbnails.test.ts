// The console's grids in a real Chromium against `npm start`: a page of twenty 12-megapixel photos loads
// their thumbnails (480-wide WebP renditions, docs/IMAGES.md), never the originals, and stays well under
// 1.5 MB of images (the lightbox's larger rendition is not loaded until it opens); when the first thumbnail
// is painted after navigating to the page is measured and recorded (goal 1 s, held by `npm run
// bench:console`); a BMP (no rendition) is a tile naming its type. The files grid, the gallery and the
// back office's moderation grid, and on a high-density screen the 960-wide rendition. Shares harness.ts
// with the other journeys; skips itself, saying why, when Chromium is absent.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browserMissing, openBrowser } from '#test/support/browser.ts';
import { makeBmp, photoJpeg } from '#test/support/images.ts';
import {
  ADMIN,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the console thumbnails journey');
const USER = newAccount('viewer');

const PHOTOS = 20;
/** The tiles a grid fetches at once (web/src/file-links.tsx FIRST_ROW); the rest are lazy. */
const FIRST_ROW = 6;
const WIDTH = 4000;
const HEIGHT = 3000;
/** `upload.max_bytes` by default: the photos go up directly, as most phone photos do. */
const DIRECT_LIMIT = 4 * 1024 * 1024;
/** What a grid of twenty photos may load in all (docs/IMAGES.md); the originals alone are about 45 MB. */
const PAGE_IMAGE_BUDGET = 1_500_000;
/** The goal for the first thumbnail's paint after navigation, held by `npm run bench:console`. */
const FIRST_PAINT_GOAL_MS = 1000;

/** The twenty photos: photo-like 4000x3000 JPEGs (about 2 MB each, under the direct limit), each distinct. */
function makePhotos(): Promise<Buffer[]> {
  return Promise.all(Array.from({ length: PHOTOS }, (_, index) => photoJpeg(WIDTH, HEIGHT, index + 1)));
}

useConsoleService(MISSING);

// Made while npm start starts (useConsoleService's beforeAll), once for the whole file.
const photosMade = MISSING ? Promise.resolve([]) : makePhotos();

const photoName = (index: number) => `photo-${String(index + 1).padStart(2, '0')}.jpg`;
const BMP_NAME = 'scan.bmp';

interface FileRecord {
  url: string;
  thumbnail: string | null;
  original_name: string;
}

/** Every image the page asks for, the originals among them, and the bytes of the image answers. */
function watchImages(target: Page) {
  const requested: string[] = [];
  const sizes: Promise<number>[] = [];
  const unreadable: string[] = [];
  target.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/i/')) requested.push(request.url());
  });
  target.on('response', (response: Response) => {
    if (response.request().resourceType() !== 'image') return;
    sizes.push(
      response.body().then(
        (body) => body.length,
        (error: unknown) => {
          unreadable.push(`${response.url()}: ${String(error)}`);
          return 0;
        },
      ),
    );
  });
  return {
    /** Requests under /i/ without a query: the originals, which no grid may draw. */
    originals: () => requested.filter((url) => new URL(url).search === ''),
    requested: () => [...requested],
    responses: () => sizes.length,
    bytes: async () => (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0),
    unreadable,
  };
}

/** The grid's pictures, brought into view one by one (they load lazily), once all have loaded. */
async function loadedGrid(target: Page, label: string, count: number) {
  const grid = target.getByRole('list', { name: label });
  const images = grid.locator('img');
  await poll(() => images.count()).toBe(count);
  for (const image of await images.all()) await image.scrollIntoViewIfNeeded();
  await poll(() =>
    images.evaluateAll((list) =>
      list.every((image) => {
        const img = image as unknown as { complete: boolean; naturalWidth: number };
        return img.complete && img.naturalWidth > 0;
      }),
    ),
  ).toBe(true);
  return {
    grid,
    images: await images.evaluateAll((list) =>
      list.map((image) => {
        const img = image as unknown as {
          alt: string;
          currentSrc: string;
          naturalWidth: number;
          naturalHeight: number;
          getAttribute(name: string): string | null;
        };
        return {
          alt: img.alt,
          src: img.getAttribute('src'),
          srcset: img.getAttribute('srcset'),
          sizes: img.getAttribute('sizes'),
          currentSrc: img.currentSrc,
          loading: img.getAttribute('loading'),
          decoding: img.getAttribute('decoding'),
          width: img.getAttribute('width'),
          height: img.getAttribute('height'),
          naturalWidth: img.naturalWidth,
          naturalHeight: img.naturalHeight,
        };
      }),
    ),
  };
}

type GridImage = Awaited<ReturnType<typeof loadedGrid>>['images'][number];

/** Each grid picture is its record's thumbnail (with the 960-wide one for 2x), none the original. */
function expectThumbnails(images: GridImage[], records: Map<string, FileRecord>, density: 1 | 2) {
  const rendition = new RegExp(
    `^${service.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/i/\\d{4}/\\d{2}/\\d{2}/[^?]+\\.jpg\\?p=thumb$`,
  );
  expect(images.map((image) => image.alt).sort()).toEqual(
    Array.from({ length: PHOTOS }, (_, index) => photoName(index)),
  );
  for (const image of images) {
    const record = records.get(image.alt)!;
    expect(record.thumbnail, image.alt).toMatch(rendition);
    const double = record.thumbnail!.replace('?p=thumb', '?p=small');
    expect(image, image.alt).toMatchObject({
      src: record.thumbnail,
      // Widths, with the tile's size (web/src/file-links.tsx): the browser picks by the tile and the screen.
      srcset: `${record.thumbnail} 480w, ${double} 960w`,
      sizes: '(max-width: 40rem) 34vw, 16rem',
      currentSrc: density === 1 ? record.thumbnail : double,
      // A grid's first row is fetched at once (it holds the page's largest paint), the rest lazily.
      loading: expect.stringMatching(/^(lazy|eager)$/),
      decoding: 'async',
      width: expect.stringMatching(/^\d+$/),
      height: expect.stringMatching(/^\d+$/),
    });
    // A rendition's 4:3 at the size the tile asked for, never the 4000x3000 original.
    expect(image.naturalWidth, image.alt).toBeLessThanOrEqual(480);
    expect(Math.abs(image.naturalWidth * 3 - image.naturalHeight * 4), image.alt).toBeLessThanOrEqual(4);
    expect(image.currentSrc).not.toBe(record.url);
  }
  expect(images.filter((image) => image.loading === 'eager').length).toBeLessThanOrEqual(FIRST_ROW);
}

describe('console thumbnails (npm start, Chromium)', () => {
  let records: Map<string, FileRecord>;

  it('draws a page of twenty 12-megapixel photos from their thumbnails, in under 1.5 MB of images', async (context) => {
    if (MISSING) context.skip(MISSING);
    const watch = watchImages(page);
    await registerAccount(USER);
    await page.goto(`${service.url}/`);
    await logIn(USER.username, USER.password);
    await heading('My files');

    // Through the API beside the page (the journey is about the grid; journeys.test.ts drives the picker).
    const token = await consoleSessionToken();
    const photos = await photosMade;
    for (const bytes of photos) expect(bytes.length).toBeLessThanOrEqual(DIRECT_LIMIT);
    const uploads = [
      ...photos.map((bytes, index) => ({ name: photoName(index), type: 'image/jpeg', bytes })),
      { name: BMP_NAME, type: 'image/bmp', bytes: makeBmp(64, 48) },
    ];
    let next = 0;
    const uploader = async () => {
      while (next < uploads.length) {
        const upload = uploads[next++]!;
        const form = new FormData();
        form.append('file', new Blob([upload.bytes], { type: upload.type }), upload.name);
        form.append('permission', 'public');
        const answer = await apiCall('POST', '/api/v1/upload', token, form);
        expect(answer.status, `${upload.name}: ${JSON.stringify(answer)}`).toBe(200);
      }
    };
    await Promise.all([uploader(), uploader(), uploader()]);
    const listed = await apiCall('GET', '/api/v1/files?limit=60', token);
    records = new Map(
      (listed.data.items as FileRecord[]).map((record: FileRecord) => [record.original_name, record]),
    );
    expect(records.size).toBe(PHOTOS + 1);
    expect(records.get(BMP_NAME)?.thumbnail).toBeNull();

    await page.reload();
    await heading('My files');
    const { grid, images } = await loadedGrid(page, 'My files', PHOTOS);
    expectThumbnails(images, records, 1);

    // The BMP has no rendition: a tile naming its type; its lightbox links the original.
    const bmp = grid.getByRole('img', { name: `${BMP_NAME} (BMP, no preview)` });
    expect(await bmp.textContent()).toBe('BMP');
    expect(watch.originals()).toEqual([]);
    expect(watch.responses()).toBeGreaterThanOrEqual(PHOTOS);
    const bytes = await watch.bytes();
    expect(watch.unreadable).toEqual([]);
    expect(bytes, `${bytes} bytes of images for ${PHOTOS} photos`).toBeLessThanOrEqual(PAGE_IMAGE_BUDGET);
    console.info(`files grid: ${bytes} bytes of images for ${PHOTOS} photos of ${WIDTH}x${HEIGHT}`);
    // The type tile too reads well (axe) and fits a phone.
    await checkPage('files-thumbnails');

    // Links still name the original: the lightbox's, opened from the tile; its picture is a rendition.
    await grid.getByRole('button', { name: photoName(0), exact: true }).click();
    const lightbox = page.getByRole('dialog');
    expect(await lightbox.getByLabel(`URL link of ${photoName(0)}`).inputValue()).toBe(
      records.get(photoName(0))!.url,
    );
    expect(await lightbox.getByRole('img', { name: photoName(0) }).getAttribute('src')).toBe(
      records.get(photoName(0))!.thumbnail!.replace('?p=thumb', '?p=medium'),
    );
    await page.keyboard.press('Escape');
    await poll(() => lightbox.count()).toBe(0);
    expect(watch.originals()).toEqual([]);
  }, 300_000);

  it('measures when the first thumbnail of the files grid is painted after navigation at 1280 px (goal: 1 s)', async (context) => {
    if (MISSING) context.skip(MISSING);
    // A browser of its own with an empty cache, holding the page's session: a first visit, as cold as it gets
    // (the renditions were made by the first test; the service stores each once, docs/IMAGES.md).
    const stored = await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { getItem(key: string): string } }).localStorage.getItem(
        'console.session',
      ),
    );
    const cold = await openBrowser({ viewport: { width: 1280, height: 800 } });
    try {
      await cold.context.addInitScript((value: string) => {
        (
          globalThis as unknown as { localStorage: { setItem(key: string, value: string): void } }
        ).localStorage.setItem('console.session', value);
      }, stored);
      const fresh = await cold.context.newPage();
      fresh.setDefaultTimeout(60_000);
      const watch = watchImages(fresh);
      await fresh.goto(`${service.url}/#/files`);
      await fresh.getByRole('heading', { level: 1, name: 'My files' }).waitFor();
      // Element timing (the grid's pictures carry `elementtiming`): when each was painted, in ms from the
      // navigation's start (the document's time origin).
      const painted = await fresh.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const browser = globalThis as unknown as {
              PerformanceObserver: new (
                callback: (list: { getEntries(): { renderTime: number; loadTime: number }[] }) => void,
              ) => { observe(options: object): void; disconnect(): void };
            };
            const observer = new browser.PerformanceObserver((list) => {
              const times = list.getEntries().map((entry) => entry.renderTime || entry.loadTime);
              if (times.length === 0) return;
              observer.disconnect();
              resolve(Math.min(...times));
            });
            observer.observe({ type: 'element', buffered: true });
          }),
      );
      const navigationStart = await fresh.evaluate(
        () =>
          (
            globalThis as unknown as {
              performance: { getEntriesByType(type: string): { startTime: number }[] };
            }
          ).performance.getEntriesByType('navigation')[0]!.startTime,
      );
      expect(watch.originals()).toEqual([]);
      const sinceNavigation = Math.round(painted - navigationStart);
      console.info(
        `files grid: first thumbnail painted ${sinceNavigation} ms after navigation (empty cache)`,
      );
      // The suite measures and records; it holds no timing to a limit (a loaded CI machine is not AWS).
      // `npm run bench:console` runs this file alone and holds it to the 1 s goal.
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(
        join(ARTIFACTS, 'first-thumbnail.json'),
        `${JSON.stringify({ first_thumbnail_ms: sinceNavigation, goal_ms: FIRST_PAINT_GOAL_MS })}\n`,
      );
      expect(painted, 'a grid picture was painted').toBeGreaterThan(navigationStart);
      if (process.env.CONSOLE_BENCH_CHECK === '1') {
        expect(sinceNavigation, 'first thumbnail painted (ms after navigation)').toBeLessThanOrEqual(
          FIRST_PAINT_GOAL_MS,
        );
      }
    } finally {
      await cold.close();
    }
  }, 120_000);

  it('draws the gallery and the moderation grid from thumbnails too, never an original', async (context) => {
    if (MISSING) context.skip(MISSING);
    const watch = watchImages(page);
    await page.getByRole('link', { name: 'Gallery' }).click();
    await heading('Public gallery');
    expectThumbnails((await loadedGrid(page, 'Public files', PHOTOS)).images, records, 1);
    await page.getByRole('img', { name: `${BMP_NAME} (BMP, no preview)` }).waitFor();

    await logOut();
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Moderation' }).click();
    await heading('Files moderation');
    expectThumbnails((await loadedGrid(page, 'All files', PHOTOS)).images, records, 1);
    await page.getByRole('img', { name: `${BMP_NAME} (BMP, no preview)` }).waitFor();
    expect(watch.originals()).toEqual([]);
  }, 180_000);

  it('picks the 960-wide rendition on a screen of two device pixels per CSS pixel', async (context) => {
    if (MISSING) context.skip(MISSING);
    const highDensity = await openBrowser({ deviceScaleFactor: 2 });
    try {
      const dense = await highDensity.context.newPage();
      dense.setDefaultTimeout(60_000);
      const watch = watchImages(dense);
      await dense.goto(`${service.url}/#/gallery`);
      await dense.getByRole('heading', { level: 1, name: 'Public gallery' }).waitFor();
      expectThumbnails((await loadedGrid(dense, 'Public files', PHOTOS)).images, records, 2);
      expect(watch.originals()).toEqual([]);
      // Each photo once, at one size: the browser never fetched the 1x as well.
      expect(watch.requested()).toHaveLength(PHOTOS);
    } finally {
      await highDensity.close();
    }
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
