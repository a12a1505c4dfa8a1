// f=auto's figures (docs/IMAGES.md "f=auto", docs/PERFORMANCE.md "f=auto"): for photo-like JPEGs, each
// candidate's bytes at f=auto's tuned qualities (q=75: AVIF 50, WebP 75, JPEG 75) and its luma PSNR against
// the resized pixels, and the first render of every preset with f=auto for a viewer accepting AVIF and
// WebP, as the render process does it (renderRendition; sharp loaded once, as an idle process has it):
// wall clock and CPU time of all threads, and the load average (a shared machine's wall clock waits).
// Prints tables and a last line `AUTO_FORMAT {...}`. Nothing here asserts a time.
//
//   npx tsx test/perf/auto-format.ts
import { loadavg } from 'node:os';
import { renderRendition } from '#lib/files/render.ts';
import { presetsOf } from '#lib/files/rendition-access.ts';
import { autoQualityOf, type OutputFormat } from '#lib/files/rendition-query.ts';
import { loadSharp } from '#lib/files/sharp.ts';
import { config } from '#lib/platform/config/index.ts';
import { photoJpeg } from '#test/support/images.ts';
import { round, timeMs } from './stats.ts';

const sharp = await loadSharp();
const LIMITS = {
  maxInputPixels: config.images.max_input_pixels,
  maxFrames: config.images.max_frames,
  avifMaxPixels: config.images.avif_max_pixels,
};
const FORMATS: OutputFormat[] = ['avif', 'webp', 'jpeg'];

/** Luma PSNR (dB) of `encoded` against the raw RGB `reference`. */
async function psnr(reference: Buffer, encoded: Buffer): Promise<number> {
  const back = await sharp(encoded).removeAlpha().raw().toBuffer();
  let squared = 0;
  const pixels = reference.length / 3;
  for (let at = 0; at < reference.length; at += 3) {
    const luma = (b: Buffer) => 0.299 * b[at]! + 0.587 * b[at + 1]! + 0.114 * b[at + 2]!;
    squared += (luma(reference) - luma(back)) ** 2;
  }
  return 10 * Math.log10((255 * 255) / (squared / pixels));
}

const sizes: Array<Record<string, number | string>> = [];
for (const [name, photo] of [
  ['photo 4000x3000', await photoJpeg(4000, 3000, 3)],
  ['photo 1600x1200', await photoJpeg(1600, 1200, 4)],
] as const) {
  for (const width of [480, 960, 1920]) {
    const resized = sharp(photo).resize({ width, withoutEnlargement: true });
    const { data, info } = await resized.raw().toBuffer({ resolveWithObject: true });
    const row: Record<string, number | string> = { photo: name, width: info.width };
    for (const format of FORMATS) {
      const raw = sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } });
      const quality = autoQualityOf(format, 75);
      const encoded = await raw[format]({ quality, ...(format === 'avif' ? { effort: 3 } : {}) }).toBuffer();
      row[`${format}_kb`] = round(encoded.length / 1024, 1);
      row[`${format}_psnr`] = round(await psnr(data, encoded), 1);
    }
    sizes.push(row);
  }
}
console.table(sizes);

const presets = presetsOf(config.images.presets, config.images);
const renders: Array<Record<string, number | string>> = [];
const source = await photoJpeg(6000, 4000, 5);
for (const [name, preset] of presets) {
  const params = { ...preset, format: 'auto' as const };
  let answer = '';
  const cpu = process.cpuUsage();
  const ms = await timeMs(async () => {
    const rendered = await renderRendition(source, 'jpeg', params, ['avif', 'webp'], LIMITS);
    answer = `${rendered.format} ${round(rendered.body.length / 1024, 1)} KB`;
  });
  // CPU (all threads) beside wall: on a machine shared with other work the wall clock waits for cores.
  const used = process.cpuUsage(cpu);
  const cpuMs = round((used.user + used.system) / 1000, 0);
  renders.push({
    preset: name,
    source: '6000x4000 JPEG',
    first_render_ms: round(ms, 0),
    cpu_ms: cpuMs,
    answer,
  });
}
console.table(renders);
console.log(`AUTO_FORMAT ${JSON.stringify({ sizes, renders, load_average: loadavg() })}`);
