// The renderer: sharp (libvips) turns an original's bytes into one rendition (docs/IMAGES.md). The header is
// read first, so a file that is not what its key says, or too large to decode, is refused before any pixel
// is decoded; then one bounded pipeline: oriented, resized (never enlarged), flattened or padded, sRGB,
// written without metadata. It runs in a render process (render-worker.ts), never in the function's own:
// that process is killed when the render outlives its deadline or its memory (render-processes.ts).
import type SharpModule from 'sharp';
import type { FailOnOptions, Metadata, OutputInfo, Sharp, SharpOptions } from 'sharp';
import { type AppError, errors } from '#lib/core/errors.ts';
import {
  autoQualityOf,
  CONTENT_TYPES,
  type OutputFormat,
  type RenderableSource,
  type RenditionParams,
} from './rendition-query.ts';
import { loadSharp } from './sharp.ts';
import { type WatermarkSpec, withMark } from './watermark.ts';

/** What one render may decode and write; its time and memory are bounded by its process (render-processes.ts). */
export interface RenderLimits {
  /** `images.max_input_pixels`: a render decoding more (all frames of an animation kept) is 422, up front. */
  maxInputPixels: number;
  /** `images.max_frames`: an animation kept as one with more frames is 422. */
  maxFrames: number;
  /** `images.avif_max_pixels`: an AVIF rendition larger than this is scaled down to it. */
  avifMaxPixels: number;
}

export interface RenderedImage {
  body: Buffer;
  format: OutputFormat;
  contentType: string;
  /** The rendition's size as shown (one frame's for an animation). */
  width: number;
  height: number;
  /** Of several candidates (`f=auto`): the larger ones, each stored under its own format's key. */
  others?: RenderedImage[];
}

// Truncated or corrupt pixel data fails the render (a cut-off JPEG would otherwise come out half grey),
// while mere warnings, which plenty of camera and phone files raise, do not: 'error' is that level.
const FAIL_ON: FailOnOptions = 'error';

/** Outputs that keep an animation; the others take the first frame. */
const ANIMATED_OUTPUTS: ReadonlySet<OutputFormat> = new Set(['gif', 'webp']);
/** Sources that may be animated (an AVIF image sequence is read as its first image). */
const ANIMATED_SOURCES: ReadonlySet<RenderableSource> = new Set(['gif', 'webp']);

const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

// AVIF's encoder is by far the slowest step. Measured on a 24-megapixel test photo, a 480-wide AVIF takes
// about 75 ms at effort 2, 85 ms at 3 and 200 ms at sharp's default 4 (3840 wide: 2.2 s at 2, 3.5 s at 3);
// effort 3's file was a quarter smaller than effort 2's and a fifth larger than effort 4's. Past 3 the time
// grows much faster than the bytes shrink, and a render must stay well inside the render timeout.
const AVIF_EFFORT = 3;

/** The format sharp's header says the bytes are, in the names of RenderableSource where it is one. */
function detectedFormat(header: Metadata): string {
  if (header.format === 'heif') return header.compression === 'av1' ? 'avif' : 'heic';
  return header.format;
}

function unreadable(sourceFormat: RenderableSource): AppError {
  return errors.unsupportedMediaType(
    `image: the bytes are not a readable ${CONTENT_TYPES[sourceFormat]} image`,
  );
}

/**
 * Whether the GIF's blocks run to its trailer within the bytes. libnsgif decodes a GIF cut off after its
 * first frame without complaint (the frames it has, the last one partly), where every other decoder here
 * refuses a truncated file; this walk makes a cut-off GIF 415 like the rest. It skips sub-blocks by their
 * lengths, so it takes at most one step per two bytes; a block type it does not know is left to the decoder.
 */
function gifIsComplete(bytes: Buffer): boolean {
  const tableSize = (flags: number) => (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0);
  /** Past a chain of sub-blocks starting at `at`, or -1 when it runs off the end. */
  const skipSubBlocks = (start: number) => {
    let at = start;
    while (at < bytes.length) {
      const length = bytes[at]!;
      if (length === 0) return at + 1;
      at += 1 + length;
    }
    return -1;
  };
  if (bytes.length < 13) return false;
  let at = 13 + tableSize(bytes[10]!);
  while (at >= 0 && at < bytes.length) {
    const block = bytes[at]!;
    if (block === 0x3b) return true; // trailer
    if (block === 0x21)
      at = skipSubBlocks(at + 2); // extension: introducer, label, sub-blocks
    else if (block === 0x2c) {
      // image: descriptor (10 bytes), local colour table, LZW minimum code size, sub-blocks
      if (at + 10 > bytes.length) return false;
      at = skipSubBlocks(at + 10 + tableSize(bytes[at + 9]!) + 1);
    } else return true;
  }
  return false;
}

/** sharp's header read: dimensions, frame count, format. No pixels are decoded. */
async function readHeader(
  sharp: typeof SharpModule,
  source: Buffer,
  sourceFormat: RenderableSource,
): Promise<Metadata> {
  try {
    // The pixel limit is checked below with a message of its own; sharp's would refuse the header read.
    return await sharp(source, { failOn: FAIL_ON, limitInputPixels: false }).metadata();
  } catch {
    throw unreadable(sourceFormat);
  }
}

function encode(image: Sharp, output: OutputFormat, quality: number): Sharp {
  switch (output) {
    case 'jpeg':
      // Plain libjpeg settings. mozjpeg's (trellis quantisation, progressive) measured 2.7 times the time
      // of a 1080-wide render (55 ms against 20) for half the bytes: a trade to make with real photos.
      return image.jpeg({ quality, mozjpeg: false });
    case 'webp':
      return image.webp({ quality });
    case 'avif':
      return image.avif({ quality: autoQualityOf('avif', quality), effort: AVIF_EFFORT });
    case 'png':
      // Lossless: `q` does not apply (a palette quantised to a quality would change the pixels).
      return image.png();
    case 'gif':
      // A palette format: `q` does not apply either; frames are requantised at sharp's default effort.
      return image.gif();
  }
}

/**
 * One rendition of `source` (whose key says it is `sourceFormat`): 415 when the bytes are not a readable
 * image of that format, 422 over the limits; never enlarged, oriented, without metadata, sRGB. Given
 * several `outputs` (`f=auto`), each is encoded (all at once) as it would be alone, and the smallest is
 * answered, the others beside it. With a `mark`, a rendition of at least its minimum size carries it (a still: an animation
 * shows its first frame).
 *
 * The limits count what the render decodes: an animation kept as one (GIF or WebP to GIF or WebP) is all
 * its frames, every other render only the first frame, so a still of a long animation stays renderable.
 */
export async function renderRendition(
  source: Buffer,
  sourceFormat: RenderableSource,
  params: RenditionParams,
  outputs: OutputFormat | readonly OutputFormat[],
  limits: RenderLimits,
  mark?: WatermarkSpec,
): Promise<RenderedImage> {
  const formats = typeof outputs === 'string' ? [outputs] : outputs;
  const output = formats[0]!;
  const sharp = await loadSharp();
  const header = await readHeader(sharp, source, sourceFormat);
  const format = detectedFormat(header);
  if (format !== sourceFormat) {
    throw errors.unsupportedMediaType(
      `image: the bytes are ${format === 'heic' ? 'HEIC' : `a ${format} image`}, not ${CONTENT_TYPES[sourceFormat]}`,
    );
  }
  if (format === 'gif' && !gifIsComplete(source)) throw unreadable(sourceFormat);
  const pages = header.pages ?? 1;
  if (pages > 1 && formats.length > 1 && mark === undefined && ANIMATED_SOURCES.has(sourceFormat)) {
    // Each candidate as it is alone (an animation kept where its format keeps one): its own stored copy.
    const answers = await Promise.all(
      formats.map((one) => renderRendition(source, sourceFormat, params, one, limits)),
    );
    return smallestFirst(answers);
  }
  const single = formats.length === 1 && mark === undefined;
  const animated = pages > 1 && ANIMATED_SOURCES.has(sourceFormat) && single && ANIMATED_OUTPUTS.has(output);
  const frames = animated ? pages : 1;
  if (frames > limits.maxFrames) {
    throw errors.unprocessable(`image: ${frames} frames is over the limit of ${limits.maxFrames}`, {
      frames,
      max_frames: limits.maxFrames,
    });
  }
  const pixels = header.width * header.height * frames;
  if (pixels > limits.maxInputPixels) {
    throw errors.unprocessable(`image: ${pixels} pixels is over the limit of ${limits.maxInputPixels}`, {
      pixels,
      max_input_pixels: limits.maxInputPixels,
    });
  }

  const options: SharpOptions = {
    failOn: FAIL_ON,
    // The same bound as above, now enforced by the decoder itself should the header have understated.
    limitInputPixels: limits.maxInputPixels,
    // Top to bottom in one pass: a downscale holds a few rows of the source, not all of it.
    sequentialRead: true,
    // Before resizing, so `w` and `h` are the displayed width and height.
    autoOrient: true,
    // `pages: 1` opens the first frame only; the rest of a 5,000-frame GIF is never decoded.
    pages: animated ? -1 : 1,
  };
  const jpeg = formats.every((candidate) => candidate === 'jpeg');
  try {
    let image = sharp(source, options).resize({
      ...(params.width !== undefined ? { width: params.width } : {}),
      ...(params.height !== undefined ? { height: params.height } : {}),
      fit: params.fit,
      withoutEnlargement: true,
      // `contain`'s padding: transparent where the output has alpha, white in a JPEG.
      background: jpeg ? WHITE : TRANSPARENT,
    });
    if (jpeg) image = image.flatten({ background: WHITE });
    // 8-bit sRGB whatever came in (CMYK, Display P3 through its profile, 16-bit); written without the
    // metadata (EXIF, GPS, XMP, ICC) sharp drops unless asked to keep it.
    image = image.toColourspace('srgb');
    if (!single) return await smallestOf(sharp, image, formats, params.quality, limits, mark);
    if (output === 'avif') image = await withinAvifBound(rawOf(sharp, await rendered(image)), limits);
    return await encoded(encode(image, output, params.quality));
  } catch (error) {
    throw renderFailure(error, sourceFormat, limits);
  }
}

type RawImage = { data: Buffer; info: OutputInfo };

function smallestFirst(answers: RenderedImage[]): RenderedImage {
  const [smallest, ...others] = answers.sort((a, b) => a.body.length - b.body.length);
  return { ...smallest!, others };
}

const rendered = (image: Sharp): Promise<RawImage> => image.raw().toBuffer({ resolveWithObject: true });
const rawOf = (sharp: typeof SharpModule, { data, info }: RawImage): Sharp =>
  sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });

async function encoded(image: Sharp): Promise<RenderedImage> {
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  const format = (info.format === 'heif' ? 'avif' : info.format) as OutputFormat;
  return {
    body: data,
    format,
    contentType: CONTENT_TYPES[format],
    width: info.width,
    height: info.pageHeight ?? info.height,
  };
}

/**
 * The pipeline's pixels once (marked when the mark applies), each candidate encoded from them at once (the
 * encoders run side by side on libuv's threads, so the slowest, AVIF's, sets the time), the smallest
 * answered with the others.
 */
async function smallestOf(
  sharp: typeof SharpModule,
  image: Sharp,
  formats: readonly OutputFormat[],
  quality: number,
  limits: RenderLimits,
  mark: WatermarkSpec | undefined,
): Promise<RenderedImage> {
  let raw = await rendered(image);
  if (mark !== undefined) raw = await withMark(sharp, raw, mark);
  const answers = await Promise.all(
    formats.map(async (format) => {
      let candidate = rawOf(sharp, raw);
      if (format === 'jpeg') candidate = candidate.flatten({ background: WHITE });
      if (format === 'avif') candidate = await withinAvifBound(candidate, limits);
      return encoded(encode(candidate, format, quality));
    }),
  );
  return smallestFirst(answers);
}

/**
 * The image scaled down (proportions kept) to at most `images.avif_max_pixels`: AVIF's encoder takes about
 * 11 s for 8.3 megapixels of noise at effort 3 on one core here, and grows with the pixels, so an AVIF of a
 * 50-megapixel original as it is would run for minutes. `image` holds raw pixels, so its size is known.
 */
async function withinAvifBound(image: Sharp, limits: RenderLimits): Promise<Sharp> {
  const { width = 0, height = 0 } = await image.metadata();
  const scale = Math.sqrt(limits.avifMaxPixels / (width * height));
  if (scale >= 1) return image;
  const size = (side: number) => Math.max(1, Math.floor(side * scale));
  return image.resize({ width: size(width), height: size(height), fit: 'fill' });
}

/** What a failed render answers: a pixel limit is 422, anything else the decoder refused 415. */
function renderFailure(error: unknown, sourceFormat: RenderableSource, limits: RenderLimits): AppError {
  const message = error instanceof Error ? error.message : String(error);
  if (/pixel limit/i.test(message)) {
    return errors.unprocessable(`image: over the limit of ${limits.maxInputPixels} pixels`, {
      max_input_pixels: limits.maxInputPixels,
    });
  }
  return unreadable(sourceFormat);
}
