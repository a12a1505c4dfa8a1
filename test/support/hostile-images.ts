// 4 MiB inputs shaped to make a naive container reader loop per byte, per segment, per box or per entry,
// and a valid 4 MiB PNG to compare them with: the bounded-work test (test/unit/files/bounded-work.test.ts)
// counts what the readers do on them, and test/perf/hostile-inputs.ts times it.
import { deflateSync } from 'node:zlib';
import { HEIF_HEAD_BYTES } from '#lib/files/measure.ts';
import type { ImageKind } from '#lib/files/metadata/types.ts';
import { makeJpeg } from './images.ts';
import { jpegWithMetadata, pngChunk } from './metadata-images.ts';

export const HOSTILE_SIZE = 4 * 1024 * 1024;

export function pseudoRandom(length: number, seed = 12345): Buffer {
  const out = Buffer.alloc(length);
  let state = seed;
  for (let index = 0; index < length; index += 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[index] = state >>> 24;
  }
  return out;
}

/** A decodable 1180x1180 RGB PNG of noise, stored uncompressed: just under 4 MiB. */
export function validPng(): Buffer {
  const side = 1180;
  const raw = pseudoRandom(side * (side * 3 + 1));
  for (let row = 0; row < side; row += 1) raw[row * (side * 3 + 1)] = 0; // filter type: none
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: 0 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `prefix`, then `unit` repeated (or `fill`), to `size` bytes. */
function crafted(prefix: Buffer | string, unit?: Buffer | string, fill = 0, size = HOSTILE_SIZE): Buffer {
  const head = typeof prefix === 'string' ? Buffer.from(prefix, 'latin1') : prefix;
  const out = Buffer.alloc(size, fill);
  head.copy(out);
  const piece = typeof unit === 'string' ? Buffer.from(unit, 'latin1') : unit;
  if (piece) for (let at = head.length; at + piece.length <= size; at += piece.length) piece.copy(out, at);
  return out;
}

/**
 * ftyp, then a meta/iprp/ipco filling the measured head with 20-byte ispe boxes: image-size scans to the end
 * for each (quadratic: seconds for this one).
 */
function ispeFlood(size: number): Buffer {
  const out = crafted('\0\0\0\x10ftypavif\0\0\0\0', undefined, 0, size);
  const end = Math.min(HEIF_HEAD_BYTES, size);
  let at = 16;
  const header = (type: string, boxSize: number, extra: number) => {
    out.writeUInt32BE(boxSize, at);
    out.write(type, at + 4, 'latin1');
    at += 8 + extra;
  };
  header('meta', end - at, 4);
  header('iprp', end - at, 0);
  header('ipco', end - at, 0);
  for (; at + 20 <= end; at += 20) {
    out.writeUInt32BE(20, at);
    out.write('ispe', at + 4, 'latin1');
    out.writeUInt32BE(1, at + 12);
    out.writeUInt32BE(1, at + 16);
  }
  return out;
}

function box(type: string, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payload.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, payload]);
}

function fullBox(type: string, version: number, payload: Buffer): Buffer {
  return box(type, Buffer.concat([Buffer.from([version, 0, 0, 0]), payload]));
}

/**
 * An AVIF with an Exif item and an iloc of 65,535 items whose extent fields are all 0 bytes wide, each
 * declaring 65,535 extents: 6 bytes per item, and a walk of every extent would be 4 billion steps.
 */
function zeroWidthExtents(size: number): Buffer {
  const ftyp = box('ftyp', Buffer.from('avif\0\0\0\0avifmif1', 'latin1'));
  const infe = fullBox('infe', 2, Buffer.from('\0\x01\0\0Exif\0', 'latin1'));
  const iinf = fullBox('iinf', 0, Buffer.concat([Buffer.from([0, 1]), infe]));
  const count = 0xffff;
  const entries = Buffer.alloc(count * 6);
  for (let item = 0; item < count; item += 1) {
    entries.writeUInt16BE(item + 1, item * 6); // item id; data reference 0
    entries.writeUInt16BE(0xffff, item * 6 + 4); // extent count
  }
  // offset, length, base offset (and index) fields all 0 bytes wide
  const iloc = fullBox('iloc', 0, Buffer.concat([Buffer.from([0, 0, 0xff, 0xff]), entries]));
  const head = Buffer.concat([ftyp, fullBox('meta', 0, Buffer.concat([iinf, iloc]))]);
  return Buffer.concat([head, box('mdat', Buffer.alloc(size - head.length - 8))]);
}

const jpegHead = makeJpeg(5, 3).subarray(0, -3); // through the SOS header

export type HostileShape = [name: string, kind: ImageKind, bytes: Buffer];

/** Shapes that make a naive reader loop per byte, per segment, per box or per entry; `size` bytes each. */
export function hostileShapes(size = HOSTILE_SIZE): HostileShape[] {
  const png = validPng();
  const shape = (prefix: Buffer | string, unit?: Buffer | string, fill = 0) =>
    crafted(prefix, unit, fill, size);
  // Container sizes that reach the end of the input, whatever its size.
  const le32 = (value: number) =>
    String.fromCharCode(value & 255, (value >> 8) & 255, (value >> 16) & 255, value >>> 24);
  const be32 = (value: number) =>
    String.fromCharCode(value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255);
  const riff = `RIFF${le32(size - 8)}WEBPVP8X`;
  return [
    ['JPEG: ff d8 ff e0 then zeros', 'jpeg', shape(Buffer.from('ffd8ffe0', 'hex'))],
    ['JPEG: fill bytes', 'jpeg', shape(Buffer.from('ffd8', 'hex'), undefined, 0xff)],
    ['JPEG: empty comments', 'jpeg', shape(Buffer.from('ffd8', 'hex'), Buffer.from('fffe0002', 'hex'))],
    [
      'JPEG: tables and comments',
      'jpeg',
      shape(Buffer.from('ffd8', 'hex'), Buffer.from('ffdb0002fffe0002', 'hex')),
    ],
    ['JPEG: a scan of stuffed bytes', 'jpeg', shape(jpegHead, Buffer.from('ff00', 'hex'))],
    ['JPEG: a scan of restart markers', 'jpeg', shape(jpegHead, Buffer.from('ffd0', 'hex'))],
    ['PNG: signature then zeros', 'png', shape(png.subarray(0, 8))],
    ['PNG: empty text chunks', 'png', shape(png.subarray(0, 33), pngChunk('tEXt', Buffer.alloc(0)))],
    ['WebP: header then zeros', 'webp', shape(riff)],
    ['WebP: empty chunks', 'webp', shape(`${riff}\x0a\0\0\0\0\0\0\0\0\0\0\0\0\0`, 'XMP \0\0\0\0')],
    ['AVIF: empty boxes', 'avif', shape('\0\0\0\x10ftypavif\0\0\0\0', '\0\0\0\x08free')],
    [
      'AVIF: ipco of empty boxes',
      'avif',
      shape(
        `\0\0\0\x10ftypavif\0\0\0\0${be32(size - 16)}meta\0\0\0\0${be32(size - 28)}iprp${be32(size - 36)}ipco`,
        '\0\0\0\x08free',
      ),
    ],
    ['AVIF: ipco of ispe boxes', 'avif', ispeFlood(size)],
    ['AVIF: iloc of zero-width extents', 'avif', zeroWidthExtents(size)],
    ['ICO: 65535 entries', 'ico', shape(Buffer.from([0, 0, 1, 0, 0xff, 0xff]), undefined, 7)],
    ['GIF: header then zeros', 'gif', shape('GIF89a')],
    ['BMP: header then zeros', 'bmp', shape('BM')],
  ];
}

/** Entropy-coded data as encoders write it: noise with every 0xFF stuffed, then EOI. */
function noiseScan(size: number): Buffer {
  const noise = pseudoRandom(size - 4096, 777);
  const stuffed = Buffer.alloc(noise.length * 2);
  let length = 0;
  for (const byte of noise) {
    stuffed[length++] = byte;
    if (byte === 0xff) stuffed[length++] = 0;
  }
  return Buffer.concat([stuffed.subarray(0, length), Buffer.from([0xff, 0xd9])]);
}

/** Real files of about 4 MiB: the valid PNG, and a JPEG with metadata and a scan of stuffed noise. */
export function realisticImages(): HostileShape[] {
  return [
    ['valid PNG', 'png', validPng()],
    [
      'JPEG with metadata and a 4 MiB scan',
      'jpeg',
      Buffer.concat([jpegWithMetadata().subarray(0, -3), noiseScan(HOSTILE_SIZE)]),
    ],
  ];
}
