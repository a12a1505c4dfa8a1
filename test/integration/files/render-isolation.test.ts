// Renders isolated and bounded (docs/IMAGES.md "Bounded renders", "One render at a time"): the attack of
// issue 37 (four slow AVIF renders of a big JPEG) no longer stops the other renders, its renders are stopped
// for real at the deadline, their 422 is remembered for images.failure_cache_seconds, and concurrent first
// requests for one rendition, on one instance or several, cause one render. Two render function instances
// share this file's table and bucket (DynamoDB Local, s3rver), each with its own render processes.
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildRenderDeps } from '#functions/render/deps.ts';
import { createRenderHandler } from '#functions/render/handler.ts';
import { needs as renderNeeds } from '#functions/render/needs.ts';
import { newFilenameSuffix, storageKey, storedFilename } from '#lib/files/names.ts';
import { RENDITION_CLAIM_PREFIX } from '#lib/files/rendition-claims.ts';
import { renditionPrefixOf } from '#lib/files/rendition-query.ts';
import { config } from '#lib/platform/config/index.ts';
import { tapLogging } from '#lib/platform/log.ts';
import { testStorage, testTable } from '#test/support/deps.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { decompressionBombPng, makePng, noiseJpeg, photoJpeg } from '#test/support/images.ts';
import { testResources } from '#test/support/resources.ts';
import { signedQuery } from '#test/support/signed-renditions.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { isAlive } from '#test/support/start-process.ts';
import { bucketKeys } from './helpers.ts';

const TIMEOUT_SECONDS = 4;
const FAILURE_SECONDS = 600;
const settings = {
  ...config,
  images: {
    ...config.images,
    render_timeout_seconds: TIMEOUT_SECONDS,
    failure_cache_seconds: FAILURE_SECONDS,
    // AVIF's bound (8.3 megapixels, about 11 s of noise here) lifted, so the attack's renders are slower than
    // the deadline on any machine.
    avif_max_pixels: 16_000_000,
  },
};

let now = new Date();
const clock = () => now;

/** One render function instance (a Lambda container): its own render processes, this file's stores. */
function instance() {
  const deps = buildRenderDeps(testResources('render', renderNeeds, { settings, clock }));
  const handler = createRenderHandler(() => deps);
  const renders = vi.spyOn(deps.renderer, 'render');
  return { deps, handler, renders };
}

type Instance = ReturnType<typeof instance>;

interface Answer {
  status: number;
  message: string | undefined;
  bytes: Buffer;
  /** When it came back, in ms since the test's start. */
  at: number;
}

let started = 0;

async function get({ handler }: Instance, key: string, query: string): Promise<Answer> {
  const result = await handler(apiEvent({ path: `/i/${key}?${signedQuery(key, query)}` }), lambdaContext);
  const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  const json = String(result.headers?.['content-type']).startsWith('application/json')
    ? (JSON.parse(bytes.toString('utf8')) as { message: string })
    : undefined;
  return { status: result.statusCode ?? 0, message: json?.message, bytes, at: performance.now() - started };
}

/** An original stored under a fresh record key, as an upload leaves it. */
async function stored(bytes: Buffer, ext: string, contentType: string): Promise<string> {
  const key = storageKey(new Date(), storedFilename(randomUUID(), newFilenameSuffix(randomUUID()), ext));
  await testStorage().put(key, bytes, contentType);
  return key;
}

/** The render processes stopped (from the renderer's log line) while the tap is on. */
function watchStopped(): Array<{ reason: string; pid: number }> {
  const stopped: Array<{ reason: string; pid: number }> = [];
  tapLogging((line) => {
    const entry = JSON.parse(line) as { message?: string; reason?: string; pid?: number };
    if (entry.message === 'render process stopped') stopped.push({ reason: entry.reason!, pid: entry.pid! });
  });
  return stopped;
}

beforeAll(async () => {
  await provisionTestStack();
});

afterEach(() => {
  tapLogging(undefined);
});

describe('a slow render', () => {
  it('is stopped at its deadline while twenty small renders answer, and its 422 is remembered', async () => {
    const a = instance();
    const big = await stored(await noiseJpeg(4000, 4000), 'jpg', 'image/jpeg');
    const small = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stored(makePng(64, 64, [i * 12, 255 - i * 12, 90]), 'png', 'image/png'),
      ),
    );
    const stopped = watchStopped();
    started = performance.now();

    // The attack: the big JPEG as AVIF at four qualities, each over 20 s of encoding on one core here.
    const slow = Promise.all([50, 75, 90, 100].map((q) => get(a, big, `f=avif&q=${q}`)));
    // Meanwhile fresh 64-pixel PNGs, a few at a time, as a page of thumbnails asks for them.
    const smallAnswers: Answer[] = [];
    for (let at = 0; at < small.length; at += 4) {
      smallAnswers.push(
        ...(await Promise.all(small.slice(at, at + 4).map((key) => get(a, key, 'w=32&f=webp')))),
      );
    }
    const slowAnswers = await slow;

    expect(smallAnswers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    for (const answer of smallAnswers) {
      expect(await sharp(answer.bytes).metadata()).toMatchObject({ format: 'webp', width: 32, height: 32 });
    }
    expect(slowAnswers.map((answer) => [answer.status, answer.message])).toEqual(
      Array(4).fill([422, `image: the render took over ${TIMEOUT_SECONDS} seconds and was stopped`]),
    );
    // Stopped, not abandoned: each slow render's process was killed and is gone; none is running.
    expect(stopped.map((entry) => entry.reason)).toEqual(Array(4).fill('deadline'));
    expect(stopped.filter((entry) => isAlive(entry.pid))).toEqual([]);
    expect(a.deps.renderer.busy).toBe(0);
    // Answered at the deadline, not minutes later (a generous bound: the machine is shared).
    for (const answer of slowAnswers) expect(answer.at).toBeLessThan((TIMEOUT_SECONDS + 10) * 1000);
    expect(a.renders).toHaveBeenCalledTimes(24);

    // The same URLs again, here and on another instance: the same 422 at once, no render.
    const b = instance();
    const again = await Promise.all([get(a, big, 'f=avif&q=50'), get(b, big, 'q=90&f=avif')]);
    expect(again.map((answer) => [answer.status, answer.message])).toEqual(
      Array(2).fill([422, `image: the render took over ${TIMEOUT_SECONDS} seconds and was stopped`]),
    );
    expect(a.renders).toHaveBeenCalledTimes(24);
    expect(b.renders).not.toHaveBeenCalled();
    expect(await bucketKeys(renditionPrefixOf(big))).toEqual([]);
  }, 60_000);
});

describe('a failed rendition', () => {
  it('answers its refusal without a render until images.failure_cache_seconds have passed', async () => {
    const a = instance();
    const bomb = await stored(await decompressionBombPng(), 'png', 'image/png');
    const refusal = [422, 'image: 400000000 pixels is over the limit of 50000000'];

    const first = await get(a, bomb, 'w=16');
    const second = await get(a, bomb, 'w=16&q=75');
    now = new Date(now.getTime() + (FAILURE_SECONDS - 1) * 1000);
    const third = await get(a, bomb, 'w=16');

    expect([first, second, third].map((answer) => [answer.status, answer.message])).toEqual(
      Array(3).fill(refusal),
    );
    expect(a.renders).toHaveBeenCalledTimes(1);

    // The window over, the next request renders it again (and is refused again, remembered anew).
    now = new Date(now.getTime() + 2000);
    const later = await get(a, bomb, 'w=16');
    const after = await get(a, bomb, 'w=16');
    expect([later.status, after.status]).toEqual([422, 422]);
    expect(a.renders).toHaveBeenCalledTimes(2);
  });
});

describe('concurrent first requests for one rendition', () => {
  it('render it once, on one instance or two, and all answer the same image', async () => {
    const [a, b] = [instance(), instance()];
    const key = await stored(await photoJpeg(2000, 1500, 37), 'jpg', 'image/jpeg');

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        get(i % 2 === 0 ? a : b, key, i < 4 ? 'w=1920&f=webp' : 'f=webp&w=1920'),
      ),
    );

    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((answer) => answer.bytes.toString('base64'))).size).toBe(1);
    expect(a.renders.mock.calls.length + b.renders.mock.calls.length).toBe(1);
    expect(await bucketKeys(renditionPrefixOf(key))).toHaveLength(1);
    expect((await sharp(answers[0]!.bytes).metadata()).width).toBe(1920);
  });
});

describe('a rendition of a key nobody stored', () => {
  it('is 404 with no render, and leaves no claim behind', async () => {
    const a = instance();
    const claims = async () => {
      let count = 0;
      for await (const page of testTable().scan({})) {
        count += page.filter((item) => String(item.pk).startsWith(RENDITION_CLAIM_PREFIX)).length;
      }
      return count;
    };
    const before = await claims();
    const key = storageKey(new Date(), storedFilename(randomUUID(), newFilenameSuffix(randomUUID()), 'png'));

    const answers = await Promise.all([get(a, key, 'w=16'), get(a, key, 'w=32&f=webp')]);

    expect(answers.map((answer) => [answer.status, answer.message])).toEqual(
      Array(2).fill([404, 'file: not found']),
    );
    expect(a.renders).not.toHaveBeenCalled();
    expect(await claims()).toBe(before);
  });
});
