// The on-function classifier's figures (lib/moderation/nsfw-model.ts), reported, never goals:
// - cold start: a fresh `node` process running a bundle built with the functions' esbuild settings
//   (infra/bundling.ts) from a directory laid out as a Lambda package (sharp installed, the backend's .wasm
//   files under node_modules/, nothing else): from the process's start to the first answer, i.e. Node's
//   start-up, the bundle's parse, the model's load and one 4000x3000 photo-like JPEG classified
//   (moderation-cold.ts);
// - per image: in this process, the model loaded, a different 4000x3000 photo-like JPEG each time (bounded on
//   load to the model's 224x224 input), and of that the decode and resize alone.
// `npm run bench -- --only moderation` runs them alone.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import { firstFrame } from '#lib/moderation/image-input.ts';
import { TFJS_WASM_FILES } from '#lib/moderation/nsfw-model.ts';
import { photoJpeg } from '#test/support/images.ts';
import { median, round, timeMs } from './stats.ts';

const PHOTO = { width: 4000, height: 3000 };
const OPTIONS = { maxInputPixels: 50_000_000, region: 'us-east-1' };

export interface ModerationReport {
  /** Process start to the first answer, median of `cold_runs` fresh processes. */
  moderation_cold_start_ms: number;
  /** Of which: process start to the bundle evaluated (Node's start-up and the bundle's parse). */
  moderation_cold_ready_ms: number;
  /** One classification of a 4000x3000 JPEG with the model loaded, median over `images`. */
  moderation_per_image_ms: number;
  /** Of which: the first frame decoded (shrunk on load), oriented and resized to 224x224. */
  moderation_decode_ms: number;
  /** The resident set of a cold process after its first answer (the model loaded), the most of any. */
  moderation_cold_rss_mib: number;
  /** Bytes the cold processes wrote besides their figures, the most of any (banners, warnings). */
  moderation_cold_console_bytes: number;
  bundle_kb: number;
  cold_runs: number;
  images: number;
  samples: { cold_ms: number[]; per_image_ms: number[]; decode_ms: number[] };
}

/** The cold-start bundle in a directory of its own, laid out as the function's package would be. */
async function lambdaLikePackage(dir: string): Promise<{ file: string; kb: number }> {
  const entry = join(import.meta.dirname, 'moderation-cold.ts');
  const file = join(dir, BUNDLE_FILE);
  await build(esbuildOptions({ entry, outfile: file, packages: { native: ['sharp'], installed: [] } }));
  const require = createRequire(import.meta.url);
  for (const path of TFJS_WASM_FILES) {
    mkdirSync(dirname(join(dir, 'node_modules', path)), { recursive: true });
    copyFileSync(require.resolve(path), join(dir, 'node_modules', path));
  }
  // sharp as installed beside the bundles; a link to this project's copy (its own imports resolve from there).
  symlinkSync(join(PROJECT_ROOT, 'node_modules', 'sharp'), join(dir, 'node_modules', 'sharp'), 'dir');
  return { file, kb: round(statSync(file).size / 1024, 0) };
}

interface ColdRun {
  ready_ms: number;
  first_answer_ms: number;
  rss_mib: number;
  /** Bytes the process wrote besides its figures (a library's banner would show here; 0 expected). */
  console_bytes: number;
}

function coldRun(file: string, image: string): ColdRun {
  const child = spawnSync(process.execPath, [file, image], { encoding: 'utf8', timeout: 120_000 });
  const lines = child.stdout.split('\n');
  const line = lines.find((entry) => entry.startsWith('COLD '));
  if (child.status !== 0 || !line) {
    throw new Error(`moderation cold run failed (${child.status}): ${child.stderr.slice(-2000)}`);
  }
  const other = child.stdout.length - line.length - 1 + child.stderr.length;
  if (other > 0)
    process.stderr.write(`moderation cold run output: ${child.stdout.replace(line, '')}${child.stderr}\n`);
  return { ...JSON.parse(line.slice('COLD '.length)), console_bytes: other };
}

export async function measureModeration(settings: {
  coldRuns: number;
  images: number;
}): Promise<ModerationReport> {
  const scratch = mkdtempSync(join(tmpdir(), 'service-bench-moderation-'));
  try {
    const photos = await Promise.all(
      Array.from({ length: settings.images + 1 }, (_, seed) => photoJpeg(PHOTO.width, PHOTO.height, seed)),
    );
    const imageFile = join(scratch, 'photo.jpg');
    writeFileSync(imageFile, photos[0]!);
    const bundle = await lambdaLikePackage(join(scratch, 'package'));
    const cold = Array.from({ length: settings.coldRuns }, () => coldRun(bundle.file, imageFile));

    const { classifierFor } = await import('#lib/moderation/classifier.ts');
    const classifier = await classifierFor('nsfwjs', OPTIONS);
    await classifier.classify(photos[0]!);
    const perImage: number[] = [];
    const decode: number[] = [];
    for (const photo of photos.slice(1)) {
      perImage.push(await timeMs(() => classifier.classify(photo)));
      decode.push(
        await timeMs(async () =>
          (
            await firstFrame(photo, OPTIONS.maxInputPixels, (frame) =>
              frame.resize(224, 224, { fit: 'fill' }),
            )
          )
            .raw()
            .toBuffer(),
        ),
      );
    }
    const coldMs = cold.map((run) => round(run.first_answer_ms, 0));
    return {
      moderation_cold_start_ms: median(coldMs),
      moderation_cold_ready_ms: round(median(cold.map((run) => run.ready_ms)), 0),
      moderation_per_image_ms: round(median(perImage), 1),
      moderation_decode_ms: round(median(decode), 1),
      moderation_cold_rss_mib: Math.max(...cold.map((run) => run.rss_mib)),
      moderation_cold_console_bytes: Math.max(...cold.map((run) => run.console_bytes)),
      bundle_kb: bundle.kb,
      cold_runs: settings.coldRuns,
      images: settings.images,
      samples: {
        cold_ms: coldMs,
        per_image_ms: perImage.map((value) => round(value, 1)),
        decode_ms: decode.map((value) => round(value, 1)),
      },
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
