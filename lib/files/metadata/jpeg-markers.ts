// Walking JPEG marker segments by their lengths (never by searching the bytes), shared by the stripper
// and the bounded dimension reader.
import { readerWork } from './types.ts';

export const SOI = 0xd8;
export const EOI = 0xd9;
export const SOS = 0xda;
export const COM = 0xfe;
export const APP0 = 0xe0;
export const APP1 = 0xe1;
export const APP2 = 0xe2;
export const APP13 = 0xed;
export const APP14 = 0xee;

/** A marker segment: `fill` is where the walk found it (0xFF fill bytes may precede the marker). */
export interface JpegSegment {
  marker: number;
  /** the first fill byte, or the marker's 0xFF when there is none */
  fill: number;
  /** the marker's 0xFF */
  start: number;
  /** first byte after the 2-byte length */
  payload: number;
  /** first byte after the segment */
  end: number;
}

/** SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC): the frame headers that carry the size. */
export function isFrameMarker(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** JPEG-LS (SOF55): a frame header of the same layout, whose scans are coded differently. */
export const SOF55 = 0xf7;

/** Huffman or arithmetic DCT/lossless frames, whose scans escape 0xFF as FF 00 (JPEG-LS does not). */
export function usesByteStuffing(frameMarker: number | undefined): boolean {
  return frameMarker !== undefined && isFrameMarker(frameMarker);
}

export function isAppMarker(marker: number): boolean {
  return marker >= 0xe0 && marker <= 0xef;
}

/** A cursor for readSegment to fill: one per walk, so a walk of many segments allocates nothing per segment. */
export function segmentCursor(): JpegSegment {
  return { marker: 0, fill: 0, start: 0, payload: 0, end: 0 };
}

/**
 * Reads the segment at `at` (0xFF fill bytes allowed before its marker; at most `maxFill` of them) into
 * `into`: undefined when read, else the reason it cannot be. Markers without a length (SOI, EOI, RSTn,
 * TEM) and 0xFF00 are not segments here.
 */
export function readSegment(
  bytes: Uint8Array,
  at: number,
  into: JpegSegment,
  maxFill = Number.POSITIVE_INFINITY,
): string | undefined {
  const length = bytes.length;
  if (at >= length) return 'ends before the first scan';
  if (bytes[at] !== 0xff) return `no marker at byte ${at}`;
  let start = at;
  while (start + 1 < length && bytes[start + 1] === 0xff) {
    start += 1;
    if (start - at > maxFill) {
      readerWork.bytes += start - at;
      return `too many fill bytes at byte ${at}`;
    }
  }
  readerWork.bytes += start - at;
  if (start + 1 >= length) return 'ends inside a marker';
  const marker = bytes[start + 1]!;
  if (marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= EOI)) {
    return `unexpected marker 0x${marker.toString(16)} at byte ${start}`;
  }
  if (start + 4 > length) return 'ends inside a segment length';
  const declared = (bytes[start + 2]! << 8) | bytes[start + 3]!;
  if (declared < 2) return `segment length ${declared} at byte ${start}`;
  const end = start + 2 + declared;
  if (end > length) return `segment at byte ${start} runs past the end`;
  into.marker = marker;
  into.fill = at;
  into.start = start;
  into.payload = start + 4;
  into.end = end;
  return undefined;
}

/** Whether bytes[at, end) begins with `prefix` (ASCII). */
export function startsWith(bytes: Uint8Array, at: number, end: number, prefix: string): boolean {
  if (end - at < prefix.length) return false;
  for (let index = 0; index < prefix.length; index += 1) {
    if (bytes[at + index] !== prefix.charCodeAt(index)) return false;
  }
  return true;
}
