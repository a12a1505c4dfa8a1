// Reading ISO base media (HEIF/AVIF) boxes with every length checked against its parent; never reads past.
import { code, countPiece, MalformedImage, readerWork } from './types.ts';

export interface Box {
  /** the four-character type as a big-endian number (compare with `code('meta')`) */
  type: number;
  start: number;
  /** first byte of the payload (after size, type, largesize and uuid) */
  payload: number;
  end: number;
}

// Sizes beyond this are lies in a file that fits in memory (and keep the arithmetic exact).
const MAX_SAFE_HIGH_WORD = 0x1fffff;

export function readUint(bytes: Uint8Array, at: number, size: number, limit: number): number {
  if (at + size > limit) throw new MalformedImage('box field past its box');
  switch (size) {
    case 0:
      return 0;
    case 1:
      return bytes[at]!;
    case 2:
      return (bytes[at]! << 8) | bytes[at + 1]!;
    case 4:
      return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
    case 8: {
      const high = readUint(bytes, at, 4, limit);
      if (high > MAX_SAFE_HIGH_WORD) throw new MalformedImage('64-bit field too large');
      return high * 2 ** 32 + readUint(bytes, at + 4, 4, limit);
    }
    default:
      throw new MalformedImage(`field size ${size}`);
  }
}

export function fourcc(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}

const UUID = code('uuid');

/** The box at `at`, which must end by `limit`. */
export function readBox(bytes: Uint8Array, at: number, limit: number): Box {
  if (at + 8 > limit) throw new MalformedImage(`truncated box header at byte ${at}`);
  const size32 = readUint(bytes, at, 4, limit);
  const type = readUint(bytes, at + 4, 4, limit);
  let payload = at + 8;
  let size = size32;
  if (size32 === 1) {
    size = readUint(bytes, at + 8, 8, limit);
    payload = at + 16;
  } else if (size32 === 0) {
    size = limit - at; // to the end of the enclosing space
  }
  if (type === UUID) payload += 16;
  const end = at + size;
  if (size < payload - at || end > limit) {
    throw new MalformedImage(
      `box ${JSON.stringify(fourcc(bytes, at + 4))} at byte ${at} runs past its parent`,
    );
  }
  return { type, start: at, payload, end };
}

/** Calls `visit` on each box that fills bytes[start, end) exactly, in order, without keeping them. */
export function eachBox(bytes: Uint8Array, start: number, end: number, visit: (box: Box) => void): void {
  let at = start;
  let pieces = 0;
  while (at < end) {
    pieces = countPiece(pieces);
    const box = readBox(bytes, at, end);
    visit(box);
    at = box.end;
  }
}

/** A NUL-terminated string at `at` (within `limit`) and where it ends; a missing NUL ends at the limit. */
export function readCString(bytes: Uint8Array, at: number, limit: number): { text: string; next: number } {
  let end = at;
  while (end < limit && bytes[end] !== 0) end += 1;
  readerWork.bytes += end - at;
  return {
    text: Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString('latin1'),
    next: Math.min(end + 1, limit),
  };
}
