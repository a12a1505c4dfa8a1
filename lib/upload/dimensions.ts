// Reads an image's width and height from its header bytes; never decodes pixels and never throws.
import { imageSize } from 'image-size';

export interface ImageDimensions {
  width: number;
  height: number;
}

// EXIF orientations 5-8 rotate the picture a quarter turn, and browsers honour them, so the size people
// see has width and height swapped relative to the stored frame.
const QUARTER_TURN_ORIENTATIONS = new Set([5, 6, 7, 8]);

function dimension(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

// image-size reads through DataViews on the whole underlying ArrayBuffer, so on a view (a subarray, or a
// small Buffer in Node's shared pool) a truncated header would be completed with neighbouring memory:
// wrong sizes, and bytes of other data. Give it a buffer of its own when the view is not the whole buffer.
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? bytes
    : Uint8Array.prototype.slice.call(bytes);
}

/** Displayed width and height; 0/0 when the bytes cannot be measured (unknown, truncated or corrupt). */
export function measureImage(bytes: Uint8Array): ImageDimensions {
  try {
    const size = imageSize(ownBuffer(bytes));
    const width = dimension(size.width);
    const height = dimension(size.height);
    if (width === 0 || height === 0) return { width: 0, height: 0 };
    return QUARTER_TURN_ORIENTATIONS.has(size.orientation ?? 1)
      ? { width: height, height: width }
      : { width, height };
  } catch {
    return { width: 0, height: 0 };
  }
}
