// The EXIF Orientation tag: read from a TIFF block, and the smallest TIFF block that carries only it.
import { readerWork } from './types.ts';

export const ORIENTATION_TAG = 0x0112;
const TYPE_SHORT = 3;

/** `Exif\0\0`, which opens the EXIF payload of a JPEG APP1 (and, against the spec, some WebP EXIF chunks). */
export const EXIF_IDENTIFIER = Buffer.from('Exif\0\0', 'latin1');

function u16(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian ? bytes[at]! | (bytes[at + 1]! << 8) : (bytes[at]! << 8) | bytes[at + 1]!;
}

function u32(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian
    ? (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0
    : ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

/**
 * The Orientation (1-8) in IFD0 of the TIFF block at bytes[start, end), or undefined when the block is
 * not TIFF, has no such tag, or holds a value outside 1-8. Reads at most IFD0's entries; never throws.
 */
export function readOrientation(bytes: Uint8Array, start: number, end: number): number | undefined {
  const limit = Math.min(end, bytes.length);
  if (start < 0 || limit - start < 8) return undefined;
  let littleEndian: boolean;
  if (bytes[start] === 0x49 && bytes[start + 1] === 0x49) littleEndian = true;
  else if (bytes[start] === 0x4d && bytes[start + 1] === 0x4d) littleEndian = false;
  else return undefined;
  if (u16(bytes, start + 2, littleEndian) !== 42) return undefined;
  const ifd = start + u32(bytes, start + 4, littleEndian);
  if (ifd < start + 8 || ifd + 2 > limit) return undefined;
  const count = u16(bytes, ifd, littleEndian);
  for (let index = 0; index < count; index += 1) {
    readerWork.pieces += 1;
    const entry = ifd + 2 + index * 12;
    if (entry + 12 > limit) return undefined;
    if (u16(bytes, entry, littleEndian) !== ORIENTATION_TAG) continue;
    if (u16(bytes, entry + 2, littleEndian) !== TYPE_SHORT || u32(bytes, entry + 4, littleEndian) !== 1) {
      return undefined;
    }
    const value = u16(bytes, entry + 8, littleEndian);
    return value >= 1 && value <= 8 ? value : undefined;
  }
  return undefined;
}

/** A big-endian TIFF block whose IFD0 holds the Orientation tag and nothing else (26 bytes). */
export function orientationTiff(orientation: number): Buffer {
  const out = Buffer.alloc(26);
  out.write('MM', 0, 'latin1');
  out.writeUInt16BE(42, 2);
  out.writeUInt32BE(8, 4); // IFD0 right after the header
  out.writeUInt16BE(1, 8); // one entry
  out.writeUInt16BE(ORIENTATION_TAG, 10);
  out.writeUInt16BE(TYPE_SHORT, 12);
  out.writeUInt32BE(1, 14);
  out.writeUInt16BE(orientation, 18); // value in the first two bytes of the 4-byte field
  out.writeUInt32BE(0, 22); // no next IFD
  return out;
}

/** Orientation 1 is "as stored": nothing worth keeping. */
export function keepsOrientation(orientation: number | undefined): orientation is number {
  return orientation !== undefined && orientation !== 1;
}
