// Width and height of an upload, by image-size over a bounded head of its bytes: the head bounds both the
// bytes image-size sees and the work it does on a hostile file.
import { imageSize } from 'image-size';

export interface ImageDimensions {
  width: number;
  height: number;
}

/**
 * The head measured for every kind but HEIF. JPEG metadata (EXIF, ICC, XMP in 64 KiB pieces) can fill
 * hundreds of kilobytes before the frame header; image-size's walks of these kinds are linear in the head.
 */
export const MEASURE_HEAD_BYTES = 1024 * 1024;

/**
 * The head measured for HEIF and AVIF (an `ftyp` box first). image-size looks for each property of `ipco`
 * from the property before it to the end of the head, so its work grows with the square of the head: a
 * head full of 20-byte `ispe` boxes costs it about 0.1 s at 64 KiB and 13 s at 1 MiB. A real `meta` box
 * (item info, locations, properties, an ICC profile) is a few kilobytes and comes before the data.
 */
export const HEIF_HEAD_BYTES = 64 * 1024;

const ZERO: ImageDimensions = Object.freeze({ width: 0, height: 0 });

// EXIF orientations 5-8 turn the picture a quarter turn, and browsers honour them, so the size people see
// has width and height swapped relative to the stored frame.
const QUARTER_TURN_ORIENTATIONS = new Set([5, 6, 7, 8]);

/** The head of `bytes` that is measured: HEIF_HEAD_BYTES for an ISO-BMFF container, else MEASURE_HEAD_BYTES. */
export function measuredHead(bytes: Uint8Array): Uint8Array {
  const isoBmff = bytes.length >= 8 && String.fromCharCode(...bytes.subarray(4, 8)) === 'ftyp';
  return bytes.subarray(0, isoBmff ? HEIF_HEAD_BYTES : MEASURE_HEAD_BYTES);
}

function dimension(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * Displayed width and height; 0/0 when the head cannot be measured (unknown, truncated or corrupt, or the
 * size lies beyond the head). Never throws.
 */
export function measureImage(bytes: Uint8Array): ImageDimensions {
  let size: ReturnType<typeof imageSize>;
  try {
    // A copy with a buffer of its own: image-size reads through DataViews over the whole underlying
    // buffer, so on a view it could read past the head's end into the rest of the upload.
    size = imageSize(new Uint8Array(measuredHead(bytes)));
  } catch {
    // image-size throws on what it cannot read: that is an image of unknown size, not a failed upload.
    return ZERO;
  }
  const width = dimension(size.width);
  const height = dimension(size.height);
  if (width === 0 || height === 0) return ZERO;
  return QUARTER_TURN_ORIENTATIONS.has(size.orientation ?? 1)
    ? { width: height, height: width }
    : { width, height };
}
