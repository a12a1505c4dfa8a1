// The render a baseline does: sharp alone, with the pipeline lib/files/render.ts builds for a still WebP
// (oriented, resized inside the width and never enlarged, sRGB, written without metadata), and none of our
// code around it (no header read before decoding, no format or limit checks, no deadline). The rendition
// figures (renditions.ts) and the rendition path's CPU baseline (aws-figures.ts) both measure against it,
// so they measure our code around sharp, not sharp.
import sharp from 'sharp';

// As lib/files/render.ts sets it at its first render: the process shares one sharp module, so both sides
// run with the same cache setting whichever goes first.
sharp.cache(false);

export interface SharpAloneOptions {
  width: number;
  quality: number;
  /** The production limit (`images.max_input_pixels`), which the decoder enforces as it reads. */
  maxInputPixels: number;
}

/** One still WebP of `source`, as the render function would write it for `w=<width>&q=<quality>&f=webp`. */
export async function sharpAloneWebp(source: Uint8Array, options: SharpAloneOptions): Promise<Buffer> {
  return sharp(source, {
    failOn: 'error',
    limitInputPixels: options.maxInputPixels,
    sequentialRead: true,
    autoOrient: true,
    pages: 1,
  })
    .resize({ width: options.width, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .webp({ quality: options.quality })
    .toBuffer();
}

/** libvips as sharp ships it (the version the render function runs). */
export const SHARP_LIBVIPS_VERSION: string = sharp.versions.vips ?? 'unknown';

/** libvips' worker threads per image in sharp (1 on glibc Linux without jemalloc, as on Lambda). */
export const sharpConcurrency = (): number => sharp.concurrency();
