// The rendition figures (docs/PERFORMANCE.md "Renditions"), through the production render handler in
// process, its storage calls going to s3rver:
//
// - the first render of a 24-megapixel photo-like JPEG to `w=480&f=webp`, each run a new key, beside sharp
//   alone doing the same render with the same storage calls made with the bare SDK (sharp-alone.ts), and
//   beside libvips' own `vipsthumbnail` doing it file to file (when installed);
// - a stored rendition served (the same query again) beside an original of the same bytes served without a
//   query;
// - the render function's peak resident set for the largest source the settings accept, in a process of its
//   own (render-memory.ts).
//
// Imported only after bench.ts has pointed the configuration at the stand-ins.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { handler as renderHandler } from '#functions/render/handler.ts';
import { newFilenameSuffix, storageKey, storedFilename } from '#lib/files/names.ts';
import { DEFAULT_FIT, renditionKeyOf } from '#lib/files/rendition-query.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { photoJpeg } from '#test/support/images.ts';
import { SHARP_LIBVIPS_VERSION, sharpAloneWebp, sharpConcurrency } from './sharp-alone.ts';
import { median, round, timeMs } from './stats.ts';

/** The rendition the console's grids ask for (docs/DESIGN.md 15, a record's `thumbnail`), as WebP. */
export const WIDTH = 480;
export const QUALITY = 75;
const QUERY = `w=${WIDTH}&f=webp`;
/** A 24-megapixel camera's photo. */
export const PHOTO = { width: 6000, height: 4000 } as const;

export const INSTALL_VIPSTHUMBNAIL = 'apt-get install -y libvips-tools';

export interface RenditionOptions {
  /** First renders timed on each side (each a new key). */
  runs: number;
  /** Pairs of stored rendition / original served. */
  storedIterations: number;
  /** Run the peak-memory child. */
  memory: boolean;
  /** A directory of this run's files (the JPEG vipsthumbnail reads, its outputs). */
  scratch: string;
}

export interface RenditionMemory {
  source_width: number;
  source_height: number;
  source_bytes: number;
  /** A child's high-water mark after its one render (render-memory.ts), MiB: the highest of the children. */
  peak_rss_mib: number;
  /** Each child's, in order. */
  peak_rss_samples_mib: number[];
  /** The highest resident set the children's millisecond sampling saw (a check on the kernel's figure). */
  sampled_peak_rss_mib: number;
  /** A child's resident set once the handler was imported, before the render, MiB (the median). */
  before_render_rss_mib: number;
  /** The render function's memory size, MB (infra: the `io` class). */
  function_memory_mb: number;
}

export interface RenditionReport {
  runs: number;
  source_bytes: number;
  rendition_bytes: number;
  rendition_first_ms: number;
  sharp_alone_ms: number;
  /** null when vipsthumbnail is not installed. */
  vipsthumbnail_ms: number | null;
  /** A vipsthumbnail process that only prints its version: the start-up its figure includes. */
  vipsthumbnail_start_ms: number | null;
  vipsthumbnail_version: string | null;
  sharp_libvips_version: string;
  /** libvips threads per image, both sides (vipsthumbnail is given sharp's). */
  vips_concurrency: number;
  rendition_ratio: number;
  samples: { first_ms: number[]; sharp_alone_ms: number[]; vipsthumbnail_ms: number[] };
  stored_iterations: number;
  rendition_stored_ms: number;
  original_ms: number;
  stored_ratio: number;
  /** The stored rendition's calls alone on the bare SDK (reported, not a goal). */
  stored_calls_ms: number;
  memory: RenditionMemory | null;
}

const s3 = () => s3Client(config.aws);

/** A new key of the record form (`yyyy/mm/dd/<uuid>-<hex>.<ext>`), the only form /i/ looks up. */
function recordKey(ext: string): string {
  return storageKey(new Date(), storedFilename(randomUUID(), newFilenameSuffix(randomUUID()), ext));
}

async function putObject(key: string, body: Uint8Array, contentType: string): Promise<void> {
  await s3().send(
    new PutObjectCommand({ Bucket: config.bucket_name, Key: key, Body: body, ContentType: contentType }),
  );
}

async function render(event: ApiEvent): Promise<ApiResult> {
  const result = await renderHandler(event, lambdaContext);
  if (result.statusCode !== 200) {
    throw new Error(`${event.rawPath}?${event.rawQueryString}: ${result.statusCode} ${result.body}`);
  }
  return result;
}

function bodyOf(result: ApiResult): Buffer {
  return Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
}

const getObject = (key: string) => s3().send(new GetObjectCommand({ Bucket: config.bucket_name, Key: key }));

/** The baseline: GetObject of the original read whole, sharp alone, PutObject of the output. */
async function sharpAlone(key: string): Promise<Buffer> {
  // The same calls as a first render: the stored copy looked for (missing), the original read whole, then
  // the output stored beside a HEAD of the original.
  const missing = await getObject(`derived/bench-baseline/${randomUUID()}.webp`).catch((error: Error) => {
    if (error.name !== 'NoSuchKey') throw error;
    return undefined;
  });
  if (missing) throw new Error('the baseline looked for a stored copy that exists');
  const got = await getObject(key);
  const bytes = await got.Body!.transformToByteArray();
  const output = await sharpAloneWebp(bytes, {
    width: WIDTH,
    quality: QUALITY,
    maxInputPixels: config.images.max_input_pixels,
  });
  await Promise.all([
    putObject(`derived/bench-baseline/${randomUUID()}.webp`, output, 'image/webp'),
    s3Client(config.aws).send(new HeadObjectCommand({ Bucket: config.bucket_name, Key: key })),
  ]);
  return output;
}

interface Vipsthumbnail {
  version: string;
  /** Renders `file` to a new WebP; resolves when the process has exited. */
  run(file: string): Promise<void>;
  /** A process that prints its version and exits. */
  start(): Promise<void>;
}

function exited(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr.slice(-500)}`)),
    );
  });
}

/**
 * Times each side once per iteration, the sides in an order that turns every iteration (so each goes first,
 * in the middle and last alike, under the same drift of a shared machine); `prepare` (untimed) gives each
 * iteration its input. The first `warmup` iterations are not kept. Answers each side's samples, ms.
 */
async function alternate<Input>(
  iterations: number,
  warmup: number,
  prepare: () => Promise<Input>,
  ...sides: Array<(input: Input) => Promise<unknown>>
): Promise<number[][]> {
  const samples = sides.map(() => [] as number[]);
  for (let iteration = 0; iteration < warmup + iterations; iteration++) {
    const input = await prepare();
    for (let turn = 0; turn < sides.length; turn++) {
      const side = (iteration + turn) % sides.length;
      const taken = await timeMs(() => sides[side]!(input));
      if (iteration >= warmup) samples[side]!.push(taken);
    }
  }
  return samples;
}

/** libvips' own thumbnailer, or null when it is not on the PATH (the comparison is then not measured). */
function findVipsthumbnail(outputs: string, concurrency: number): Vipsthumbnail | null {
  const probe = spawnSync('vipsthumbnail', ['--vips-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return null;
  let made = 0;
  return {
    version: probe.stdout.trim(),
    // `-s 480x`: 480 wide, any height; the format from the suffix; `strip` drops the metadata as sharp
    // does (libvips 8.14's name for it; 8.15 renamed it `keep`). The same threads per image as sharp's,
    // so the comparison is of the work, not of how many cores it spreads over.
    run: (file) =>
      exited('vipsthumbnail', [
        file,
        '-s',
        `${WIDTH}x`,
        `--vips-concurrency=${concurrency}`,
        '-o',
        `${join(outputs, `v-${++made}.webp`)}[Q=${QUALITY},strip]`,
      ]),
    start: () => exited('vipsthumbnail', ['--vips-version']),
  };
}

// The same render's peak varies from one process to the next (by about a tenth here: which of libuv's and
// libvips' threads allocate, in which malloc arena, depends on timing); the function must hold the worst,
// so a few processes render and the highest counts.
const MEMORY_CHILDREN = 3;

/** render-memory.ts in a process of its own, so this runner's resident set does not count. */
function renderMemory(key: string): {
  peak_rss_kib: number;
  sampled_peak_rss_kib: number;
  before_render_rss_kib: number;
} {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'render-memory.ts'), key],
    { env: process.env, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const line = child.stdout.split('\n').find((entry) => entry.startsWith('RENDER_MEMORY '));
  if (child.status !== 0 || !line) {
    throw new Error(`render memory run failed (${child.status}): ${child.stderr.slice(-2000)}`);
  }
  return JSON.parse(line.slice('RENDER_MEMORY '.length));
}

/** The largest 3:2 photo `images.max_input_pixels` lets through (8660 x 5773 at the default 50,000,000). */
export function largestPhoto(maxPixels: number): { width: number; height: number } {
  let width = Math.floor(Math.sqrt((maxPixels * 3) / 2));
  while (width * Math.floor((width * 2) / 3) > maxPixels) width -= 1;
  return { width, height: Math.floor((width * 2) / 3) };
}

export async function measureRenditions(options: RenditionOptions): Promise<RenditionReport> {
  const photo = await photoJpeg(PHOTO.width, PHOTO.height);
  const file = join(options.scratch, 'photo-24mp.jpg');
  const outputs = join(options.scratch, 'vipsthumbnail');
  mkdirSync(outputs, { recursive: true });
  writeFileSync(file, photo);
  const concurrency = sharpConcurrency();
  const vips = findVipsthumbnail(outputs, concurrency);
  if (!vips) {
    console.log(
      `vipsthumbnail is not installed: the comparison with libvips' own thumbnailer is not measured (${INSTALL_VIPSTHUMBNAIL})`,
    );
  }

  const newOriginal = async () => {
    const key = recordKey('jpg');
    await putObject(key, photo, 'image/jpeg');
    return key;
  };
  const firstRender = async (key: string) => bodyOf(await render(apiEvent({ path: `/i/${key}?${QUERY}` })));

  // The rendition the stored figures serve; the first renders below start with two untimed rounds (sharp
  // and libvips loaded, the clients' connections open, the code compiled).
  const warm = await newOriginal();
  const rendition = await firstRender(warm);

  const [first, alone, thumbnailer, starts] = await alternate(
    options.runs,
    2,
    newOriginal,
    (key) => firstRender(key),
    (key) => sharpAlone(key),
    ...(vips ? [() => vips.run(file), () => vips.start()] : []),
  );

  // A stored rendition (the warm-up's, the same query again) beside the same bytes stored as an original
  // and served without a query: both are a read and an answer of the same size. Beside them, the call the
  // stored rendition's answer makes, alone on the bare SDK: the stored copy read whole.
  const storedEvent = apiEvent({ path: `/i/${warm}?${QUERY}` });
  const plainKey = recordKey('webp');
  await putObject(plainKey, rendition, 'image/webp');
  const plainEvent = apiEvent({ path: `/i/${plainKey}` });
  const storedKey = renditionKeyOf(warm, { width: WIDTH, fit: DEFAULT_FIT, quality: QUALITY }, 'webp');
  const [stored, original, storedCalls] = await alternate(
    options.storedIterations,
    3,
    async () => undefined,
    async () => {
      if (!bodyOf(await render(storedEvent)).equals(rendition)) throw new Error('stored rendition differs');
    },
    async () => {
      if (!bodyOf(await render(plainEvent)).equals(rendition)) throw new Error('original differs');
    },
    async () => {
      const copy = await getObject(storedKey);
      if (!Buffer.from(await copy.Body!.transformToByteArray()).equals(rendition)) {
        throw new Error(`${storedKey} is not the stored rendition`);
      }
    },
  );

  let memory: RenditionMemory | null = null;
  if (options.memory) {
    const size = largestPhoto(config.images.max_input_pixels);
    const source = await photoJpeg(size.width, size.height);
    const measured: Array<ReturnType<typeof renderMemory>> = [];
    for (let child = 0; child < MEMORY_CHILDREN; child++) {
      const key = recordKey('jpg');
      await putObject(key, source, 'image/jpeg');
      measured.push(renderMemory(key));
    }
    const peaks = measured.map((entry) => round(entry.peak_rss_kib / 1024, 1));
    const { MEMORY_MB } = await import('#infra/service-function.ts');
    const { FUNCTION_SPECS } = await import('#infra/api.ts');
    memory = {
      source_width: size.width,
      source_height: size.height,
      source_bytes: source.length,
      peak_rss_mib: Math.max(...peaks),
      peak_rss_samples_mib: peaks,
      sampled_peak_rss_mib: Math.max(...measured.map((entry) => round(entry.sampled_peak_rss_kib / 1024, 1))),
      before_render_rss_mib: round(median(measured.map((entry) => entry.before_render_rss_kib)) / 1024, 1),
      function_memory_mb: MEMORY_MB[FUNCTION_SPECS.render.functionClass],
    };
  }

  const firstMs = median(first!);
  const aloneMs = median(alone!);
  const storedMs = median(stored!);
  const originalMs = median(original!);
  return {
    runs: options.runs,
    source_bytes: photo.length,
    rendition_bytes: rendition.length,
    rendition_first_ms: round(firstMs, 1),
    sharp_alone_ms: round(aloneMs, 1),
    vipsthumbnail_ms: thumbnailer ? round(median(thumbnailer), 1) : null,
    vipsthumbnail_start_ms: starts ? round(median(starts), 1) : null,
    vipsthumbnail_version: vips?.version ?? null,
    sharp_libvips_version: SHARP_LIBVIPS_VERSION,
    vips_concurrency: concurrency,
    rendition_ratio: round(firstMs / aloneMs, 2),
    samples: {
      first_ms: first!.map((value) => round(value, 1)),
      sharp_alone_ms: alone!.map((value) => round(value, 1)),
      vipsthumbnail_ms: (thumbnailer ?? []).map((value) => round(value, 1)),
    },
    stored_iterations: options.storedIterations,
    rendition_stored_ms: round(storedMs, 2),
    original_ms: round(originalMs, 2),
    stored_ratio: round(storedMs / originalMs, 2),
    stored_calls_ms: round(median(storedCalls!), 2),
    memory,
  };
}
