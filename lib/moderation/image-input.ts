// The one bounded decode every classifier starts from: the first frame only, turned as the EXIF orientation
// says, never more than `maxInputPixels` in the header, and shrunk while it loads (libvips decodes a JPEG or
// WebP at 1/2, 1/4 or 1/8 scale when the output is that much smaller), so a 24-megapixel photo is never
// decoded at full size for a 224-pixel input.
import type { Sharp } from 'sharp';
import { loadSharp } from '#lib/files/sharp.ts';

/** Transparent pixels are judged as shown on a white page. */
const WHITE = { r: 255, g: 255, b: 255 };

/**
 * The image's first frame, oriented, resized by `resize` and flattened on white, in 8-bit sRGB. Truncated or
 * slightly corrupt pixel data is classified as far as it decodes (browsers show such a file, so it must not
 * escape classification by failing the decoder); a header over `maxInputPixels` is refused (it throws).
 */
export async function firstFrame(
  bytes: Uint8Array,
  maxInputPixels: number,
  resize: (image: Sharp) => Sharp,
): Promise<Sharp> {
  const sharp = await loadSharp();
  const image = sharp(bytes, {
    pages: 1,
    limitInputPixels: maxInputPixels,
    autoOrient: true,
    sequentialRead: true,
    failOn: 'none',
  });
  return resize(image).flatten({ background: WHITE }).toColourspace('srgb');
}
