// Reads an image's width and height from a bounded head of its bytes, in bounded work: never decodes
// pixels, never scans the body, never throws. (image-size, which this replaces with the same answers, walks
// a JPEG byte by byte and a HEIF's properties quadratically: 4 MiB of crafted JPEG cost it 0.4 s of CPU,
// 256 KiB of crafted AVIF 0.5 s, and it grows with the square of the size.)
import { keepsOrientation, readOrientation } from '#lib/files/metadata/exif.ts';
import {
  APP1,
  isFrameMarker,
  readSegment,
  SOS,
  segmentCursor,
  startsWith,
} from '#lib/files/metadata/jpeg-markers.ts';
import { readerWork } from '#lib/files/metadata/types.ts';

export interface ImageDimensions {
  width: number;
  height: number;
}

/**
 * The most of a file any measurement reads: the head confirm keeps (CONFIRM_HEAD_BYTES), so a direct and a
 * presigned upload of the same bytes measure alike. JPEG metadata (EXIF, ICC, XMP) can fill hundreds of
 * kilobytes before the frame header; walking it costs one step per segment, not per byte.
 */
export const MEASURE_HEAD_BYTES = 1024 * 1024;

// Real JPEG headers have tens of segments (tables, APPn; an ICC profile or extended XMP in 64 KiB pieces, at
// most 16 of which fit in the head); fill bytes between segments are one or two. Past these: 0x0.
const MAX_JPEG_SEGMENTS = 256;
const MAX_JPEG_FILL = 64;
// Icons hold a few sizes (16 to 256 pixels); the largest of the first 256 entries is the answer.
const MAX_ICO_ENTRIES = 256;
// AVIF keeps its size in meta/iprp/ipco/ispe: a handful of boxes at each level.
const MAX_BOXES_PER_LEVEL = 256;

const ZERO: ImageDimensions = Object.freeze({ width: 0, height: 0 });

// EXIF orientations 5-8 rotate the picture a quarter turn, and browsers honour them, so the size people
// see has width and height swapped relative to the stored frame.
const QUARTER_TURN_ORIENTATIONS = new Set([5, 6, 7, 8]);

function dimension(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

function sized(width: number, height: number, quarterTurn = false): ImageDimensions {
  const w = dimension(width);
  const h = dimension(height);
  if (w === 0 || h === 0) return ZERO;
  return quarterTurn ? { width: h, height: w } : { width: w, height: h };
}

type Measurable = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp' | 'ico' | 'heif';

function has(bytes: Uint8Array, at: number, ascii: string): boolean {
  return startsWith(bytes, at, bytes.length, ascii);
}

function u16le(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

function u24le(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
}

function u32le(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function u32be(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

/** The container, from its signature; the same families sniffImage allows. */
function containerOf(bytes: Uint8Array): Measurable | undefined {
  if (bytes.length < 4) return undefined;
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'jpeg';
  if (bytes[0] === 0x89 && has(bytes, 1, 'PNG\r\n\x1a\n')) return 'png';
  if (has(bytes, 0, 'GIF87a') || has(bytes, 0, 'GIF89a')) return 'gif';
  if (has(bytes, 0, 'RIFF') && has(bytes, 8, 'WEBP')) return 'webp';
  if (has(bytes, 0, 'BM')) return 'bmp';
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 1 && bytes[3] === 0) return 'ico';
  if (has(bytes, 4, 'ftyp')) return 'heif';
  return undefined;
}

// The fixed-layout headers below read what image-size 2 reads, so sizes stay what they were.

/** IHDR's width and height (after Apple's CgBI chunk when there is one). */
function measurePng(bytes: Uint8Array): ImageDimensions {
  const header = has(bytes, 12, 'CgBI') ? 16 : 0;
  if (bytes.length < header + 24 || !has(bytes, header + 12, 'IHDR')) return ZERO;
  return sized(u32be(bytes, header + 16), u32be(bytes, header + 20));
}

function measureGif(bytes: Uint8Array): ImageDimensions {
  return bytes.length < 10 ? ZERO : sized(u16le(bytes, 6), u16le(bytes, 8));
}

/** The DIB header's width and height; a negative height is a top-down bitmap of that height. */
function measureBmp(bytes: Uint8Array): ImageDimensions {
  return bytes.length < 26 ? ZERO : sized(u32le(bytes, 18), Math.abs(u32le(bytes, 22) | 0));
}

/** VP8X's canvas, or the lossy (VP8) or lossless (VP8L) frame header of a simple WebP. */
function measureWebp(bytes: Uint8Array): ImageDimensions {
  if (bytes.length < 30) return ZERO;
  if (has(bytes, 12, 'VP8X')) {
    const flags = bytes[20]!;
    if ((flags & 0xc1) !== 0) return ZERO; // reserved bits set: not a VP8X header
    return sized(1 + u24le(bytes, 24), 1 + u24le(bytes, 27));
  }
  if (has(bytes, 12, 'VP8 ') && bytes[20] !== 0x2f) {
    return sized(u16le(bytes, 26) & 0x3fff, u16le(bytes, 28) & 0x3fff);
  }
  if (has(bytes, 12, 'VP8L') && !(bytes[23] === 0x9d && bytes[24] === 0x01 && bytes[25] === 0x2a)) {
    const width = 1 + (((bytes[22]! & 0x3f) << 8) | bytes[21]!);
    const height = 1 + (((bytes[24]! & 0x0f) << 10) | (bytes[23]! << 2) | ((bytes[22]! & 0xc0) >> 6));
    return sized(width, height);
  }
  return ZERO;
}

/** SOFn's height and width, and EXIF's orientation, walking segments up to the first scan. */
function measureJpeg(bytes: Uint8Array): ImageDimensions {
  let at = 2;
  let orientation: number | undefined;
  let exifSeen = false;
  const seg = segmentCursor();
  for (let step = 0; step < MAX_JPEG_SEGMENTS; step += 1) {
    readerWork.pieces += 1;
    if (readSegment(bytes, at, seg, MAX_JPEG_FILL) !== undefined || seg.marker === SOS) return ZERO;
    if (seg.marker === APP1 && !exifSeen && startsWith(bytes, seg.payload, seg.end, 'Exif\0')) {
      exifSeen = true;
      orientation = readOrientation(bytes, seg.payload + 6, seg.end);
    }
    if (isFrameMarker(seg.marker)) {
      if (seg.end - seg.payload < 5) return ZERO;
      const height = (bytes[seg.payload + 1]! << 8) | bytes[seg.payload + 2]!;
      const width = (bytes[seg.payload + 3]! << 8) | bytes[seg.payload + 4]!;
      return sized(
        width,
        height,
        keepsOrientation(orientation) && QUARTER_TURN_ORIENTATIONS.has(orientation),
      );
    }
    at = seg.end;
  }
  return ZERO;
}

/** The largest entry of the directory (0 stands for 256), as image-size reports; one step per entry. */
function measureIco(bytes: Uint8Array): ImageDimensions {
  const declared = u16le(bytes, 4);
  if (declared === 0 || 6 + declared * 16 > bytes.length) return ZERO;
  const count = Math.min(declared, MAX_ICO_ENTRIES);
  let width = 0;
  let height = 0;
  readerWork.pieces += count;
  for (let entry = 0; entry < count; entry += 1) {
    const at = 6 + entry * 16;
    const w = bytes[at] || 256;
    const h = bytes[at + 1] || 256;
    if (w * h > width * height) {
      width = w;
      height = h;
    }
  }
  return sized(width, height);
}

const META = 0x6d657461; // 'meta'
const IPRP = 0x69707270; // 'iprp'
const IPCO = 0x6970636f; // 'ipco'
const ISPE = 0x69737065; // 'ispe'

/**
 * The [payload, end) of the first box of type `wanted` among those filling bytes[start, end), looking at no
 * more than MAX_BOXES_PER_LEVEL boxes; undefined when absent or when a box is not well formed.
 */
function findBox(
  bytes: Uint8Array,
  start: number,
  end: number,
  wanted: number,
): [number, number] | undefined {
  let at = start;
  for (let step = 0; step < MAX_BOXES_PER_LEVEL && at + 8 <= end; step += 1) {
    readerWork.pieces += 1;
    const size = u32be(bytes, at);
    // 0 (to the end) and 1 (64-bit size) never hold what is measured here; < 8 is not a box.
    if (size < 8 || at + size > end) return undefined;
    if (u32be(bytes, at + 4) === wanted) return [at + 8, at + size];
    at += size;
  }
  return undefined;
}

/** The largest ispe of meta/iprp/ipco (as image-size reports a multi-image HEIF), in bounded steps. */
function measureHeif(bytes: Uint8Array): ImageDimensions {
  const meta = findBox(bytes, 0, bytes.length, META);
  const iprp = meta && findBox(bytes, meta[0] + 4, meta[1], IPRP);
  const ipco = iprp && findBox(bytes, iprp[0], iprp[1], IPCO);
  if (ipco === undefined) return ZERO;
  let width = 0;
  let height = 0;
  let at = ipco[0];
  for (let step = 0; step < MAX_BOXES_PER_LEVEL && at + 8 <= ipco[1]; step += 1) {
    readerWork.pieces += 1;
    const size = u32be(bytes, at);
    if (size < 8 || at + size > ipco[1]) break;
    if (u32be(bytes, at + 4) === ISPE && size >= 20) {
      const w = u32be(bytes, at + 12);
      const h = u32be(bytes, at + 16);
      if (w * h > width * height) {
        width = w;
        height = h;
      }
    }
    at += size;
  }
  return sized(width, height);
}

/**
 * Displayed width and height; 0/0 when the bytes cannot be measured (unknown, truncated or corrupt).
 * Reads at most the first MEASURE_HEAD_BYTES, in a bounded number of steps whatever the bytes are.
 */
export function measureImage(bytes: Uint8Array): ImageDimensions {
  try {
    const head = bytes.subarray(0, MEASURE_HEAD_BYTES);
    switch (containerOf(head)) {
      case 'jpeg':
        return measureJpeg(head);
      case 'png':
        return measurePng(head);
      case 'gif':
        return measureGif(head);
      case 'webp':
        return measureWebp(head);
      case 'bmp':
        return measureBmp(head);
      case 'ico':
        return measureIco(head);
      case 'heif':
        return measureHeif(head);
      default:
        return ZERO;
    }
  } catch {
    // Every read above is bounds-checked; this only keeps the promise never to throw.
    return ZERO;
  }
}
