// Work per upload is bounded (docs/UPLOADS.md): crafted 4 MiB inputs cost about what a valid 4 MiB PNG
// costs to take in (sniff, measure, hash), and stripping costs about what hashing the bytes costs.
// CPU time, best of several rounds; the margins are wide so a busy shared machine does not flake.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MEASURE_HEAD_BYTES, measureImage } from '../../../lib/upload/dimensions.ts';
import { stripMetadata } from '../../../lib/upload/metadata/index.ts';
import { IMAGE_KINDS, type ImageKind, sniffImage } from '../../../lib/upload/sniff.ts';
import { makeJpeg } from '../../support/images.ts';
import { jpegWithMetadata, pngChunk } from '../../support/metadata-images.ts';

const SIZE = 4 * 1024 * 1024;
const ROUNDS = 5;

function pseudoRandom(length: number, seed = 12345): Buffer {
  const out = Buffer.alloc(length);
  let state = seed;
  for (let index = 0; index < length; index += 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[index] = state >>> 24;
  }
  return out;
}

/** A decodable 1180x1180 RGB PNG of noise, stored uncompressed: just under 4 MiB. */
function validPng(): Buffer {
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

/** `prefix`, then `unit` repeated (or `fill`), to 4 MiB. */
function crafted(prefix: Buffer | string, unit?: Buffer | string, fill = 0): Buffer {
  const head = typeof prefix === 'string' ? Buffer.from(prefix, 'latin1') : prefix;
  const out = Buffer.alloc(SIZE, fill);
  head.copy(out);
  const piece = typeof unit === 'string' ? Buffer.from(unit, 'latin1') : unit;
  if (piece) for (let at = head.length; at + piece.length <= SIZE; at += piece.length) piece.copy(out, at);
  return out;
}

/**
 * ftyp, then a meta/iprp/ipco filling the measured head with 20-byte ispe boxes: image-size scans to the end
 * for each (quadratic: seconds for this one).
 */
function ispeFlood(): Buffer {
  const out = crafted('\0\0\0\x10ftypavif\0\0\0\0');
  const end = MEASURE_HEAD_BYTES;
  let at = 16;
  const header = (type: string, size: number, extra: number) => {
    out.writeUInt32BE(size, at);
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

const png = validPng();
const jpegHead = makeJpeg(5, 3).subarray(0, -3); // through the SOS header

// Shapes that make a naive reader loop per byte, per segment, per box or per entry.
const SHAPES: Array<[string, ImageKind, Buffer]> = [
  ['JPEG: ff d8 ff e0 then zeros', 'jpeg', crafted(Buffer.from('ffd8ffe0', 'hex'))],
  ['JPEG: fill bytes', 'jpeg', crafted(Buffer.from('ffd8', 'hex'), undefined, 0xff)],
  ['JPEG: empty comments', 'jpeg', crafted(Buffer.from('ffd8', 'hex'), Buffer.from('fffe0002', 'hex'))],
  [
    'JPEG: tables and comments',
    'jpeg',
    crafted(Buffer.from('ffd8', 'hex'), Buffer.from('ffdb0002fffe0002', 'hex')),
  ],
  ['JPEG: a scan of stuffed bytes', 'jpeg', crafted(jpegHead, Buffer.from('ff00', 'hex'))],
  ['JPEG: a scan of restart markers', 'jpeg', crafted(jpegHead, Buffer.from('ffd0', 'hex'))],
  ['PNG: signature then zeros', 'png', crafted(png.subarray(0, 8))],
  ['PNG: empty text chunks', 'png', crafted(png.subarray(0, 33), pngChunk('tEXt', Buffer.alloc(0)))],
  ['WebP: header then zeros', 'webp', crafted('RIFF\xf8\xff\x3f\0WEBPVP8X')],
  [
    'WebP: empty chunks',
    'webp',
    crafted('RIFF\xf8\xff\x3f\0WEBPVP8X\x0a\0\0\0\0\0\0\0\0\0\0\0\0\0', 'XMP \0\0\0\0'),
  ],
  ['AVIF: empty boxes', 'avif', crafted('\0\0\0\x10ftypavif\0\0\0\0', '\0\0\0\x08free')],
  [
    'AVIF: ipco of empty boxes',
    'avif',
    crafted(
      '\0\0\0\x10ftypavif\0\0\0\0\0\x3f\xff\xf0meta\0\0\0\0\0\x3f\xff\xe4iprp\0\x3f\xff\xdcipco',
      '\0\0\0\x08free',
    ),
  ],
  ['AVIF: ipco of ispe boxes', 'avif', ispeFlood()],
  ['ICO: 65535 entries', 'ico', crafted(Buffer.from([0, 0, 1, 0, 0xff, 0xff]), undefined, 7)],
  ['GIF: header then zeros', 'gif', crafted('GIF89a')],
  ['BMP: header then zeros', 'bmp', crafted('BM')],
];

/** CPU microseconds per call: the best of ROUNDS rounds of `calls` calls. */
async function cpuMicros(calls: number, work: () => unknown): Promise<number> {
  // Warm up, so the rounds measure optimised code as a container serving uploads runs it.
  for (let call = 0; call < 10; call += 1) await work();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.cpuUsage();
    for (let call = 0; call < calls; call += 1) await work();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / calls);
  }
  return best;
}

/** What the upload path does with any bytes before storing them: sniff, measure, hash. */
async function intake(bytes: Buffer): Promise<void> {
  await sniffImage(bytes, IMAGE_KINDS).catch(() => undefined);
  measureImage(bytes);
  createHash('sha256').update(bytes).digest('hex');
}

describe('bounded work on crafted 4 MiB inputs', () => {
  it('takes in any shape for at most a small multiple of a valid 4 MiB PNG', async () => {
    const baseline = await cpuMicros(5, () => intake(png));
    for (const [name, , bytes] of SHAPES) {
      const cost = await cpuMicros(5, () => intake(bytes));
      // Alone about 1x to 2x; inside a full parallel run it reached 3.1x (PNG of empty text chunks). The
      // failure this guards against, a reader looping per byte or per box, costs hundreds (image-size took
      // some 400 ms on one of these shapes).
      expect(cost, `${name}: ${cost.toFixed(0)} µs vs ${baseline.toFixed(0)} µs for the PNG`).toBeLessThan(
        10 * baseline,
      );
    }
  });

  it('measures any shape in microseconds, bounded whatever the size', async () => {
    const baseline = await cpuMicros(2000, () => measureImage(png));
    for (const [name, , bytes] of SHAPES) {
      const cost = await cpuMicros(2000, () => measureImage(bytes));
      // image-size took some 400 ms on the first shape; 256 JPEG segments are the longest walk here.
      expect(cost, `${name}: ${cost.toFixed(2)} µs vs ${baseline.toFixed(2)} µs for the PNG`).toBeLessThan(
        50,
      );
    }
  });

  it('strips any shape in time linear in its size, a small multiple of hashing it', async () => {
    const hashing = await cpuMicros(5, () => createHash('sha256').update(png).digest());
    const realistic: Array<[string, ImageKind, Buffer]> = [
      ['valid PNG', 'png', png],
      [
        'JPEG with metadata and a 4 MiB scan',
        'jpeg',
        Buffer.concat([jpegWithMetadata().subarray(0, -3), noiseScan()]),
      ],
    ];
    for (const [name, kind, bytes] of [...SHAPES, ...realistic]) {
      const cost = await cpuMicros(3, () => stripMetadata(bytes, kind));
      // Walking 4 MiB of tiny segments costs a few hashes (measured up to 4.1x on a loaded machine); the
      // failure this guards against, a quadratic or backtracking walk, costs hundreds.
      expect(cost, `${name}: ${cost.toFixed(0)} µs vs ${hashing.toFixed(0)} µs to hash`).toBeLessThan(
        10 * hashing,
      );
    }
  });
});

/** Entropy-coded data as encoders write it: noise with every 0xFF stuffed, then EOI. */
function noiseScan(): Buffer {
  const noise = pseudoRandom(SIZE - 4096, 777);
  const stuffed = Buffer.alloc(noise.length * 2);
  let length = 0;
  for (const byte of noise) {
    stuffed[length++] = byte;
    if (byte === 0xff) stuffed[length++] = 0;
  }
  return Buffer.concat([stuffed.subarray(0, length), Buffer.from([0xff, 0xd9])]);
}
