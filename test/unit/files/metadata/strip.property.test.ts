// Property: on any bytes the stripper answers in work linear in their size and without throwing, and what
// it calls stripped is an image without metadata that measures as before and that a second pass leaves alone.
import fc from 'fast-check';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { measureImage } from '#lib/files/measure.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { type ImageKind, readerWork } from '#lib/files/metadata/types.ts';
import { makePng } from '#test/support/images.ts';
import {
  avifWithMetadata,
  jpegSegment,
  jpegWithMetadata,
  pngChunk,
  pngWithMetadata,
  riffChunk,
  webpWithMetadata,
  XMP_PACKET,
} from '#test/support/metadata-images.ts';
import { mutated, noise } from './arbitraries.ts';
import { jpegHeader, pngChunks, riffChunks } from './readers.ts';

/** Fixed so failures reproduce; `METADATA_SEED=<n>` explores another part of the space. */
const SEED = Number(process.env.METADATA_SEED ?? 20261121);
const RUNS = Number(process.env.METADATA_RUNS ?? 400);

function sizeOf(bytes: Buffer): { width?: number; height?: number } | undefined {
  try {
    const { width, height } = imageSize(new Uint8Array(bytes));
    return { width, height };
  } catch {
    return undefined;
  }
}

function expectNoMetadata(kind: ImageKind, bytes: Buffer): void {
  if (kind === 'jpeg') {
    for (const segment of jpegHeader(bytes).segments) {
      const head = segment.data.toString('latin1', 0, 12);
      const allowed =
        (segment.type === 'APP0' && head.startsWith('JFIF\0')) ||
        (segment.type === 'APP2' && head.startsWith('ICC_PROFILE\0')) ||
        (segment.type === 'APP14' && head.startsWith('Adobe')) ||
        (segment.type === 'APP1' && head.startsWith('Exif\0') && segment.data.length === 6 + 26) ||
        !(segment.type.startsWith('APP') || segment.type === 'COM');
      expect(allowed, `${segment.type} ${JSON.stringify(head)} left in`).toBe(true);
    }
  } else if (kind === 'png') {
    for (const chunk of pngChunks(bytes)) {
      expect(['tEXt', 'iTXt', 'zTXt', 'tIME', 'exIf', 'zxIf']).not.toContain(chunk.type);
      if (chunk.type === 'eXIf') expect(chunk.data.length).toBe(26);
    }
  } else if (kind === 'webp') {
    for (const chunk of riffChunks(bytes)) {
      expect(chunk.type).not.toBe('XMP ');
      if (chunk.type === 'EXIF') expect(chunk.data.length).toBe(26);
    }
  }
}

function checkStrip(kind: ImageKind, input: Buffer): void {
  const copy = Buffer.from(input);
  readerWork.pieces = 0;
  readerWork.bytes = 0;
  const result = stripMetadata(input, kind);
  // Counted, not timed (a loaded machine cannot fail it): each byte examined at most twice, plus a few
  // pieces. These inputs take a few dozen steps; a loop gone wrong (per piece, or not moving on) takes
  // thousands per byte.
  const work = readerWork.pieces + readerWork.bytes;
  expect(work, `${work} steps for ${input.length} bytes`).toBeLessThanOrEqual(2 * input.length + 64);
  expect(input.equals(copy), 'the input was modified').toBe(true);
  if (result.kind !== 'stripped') {
    expect(result.reason).toMatch(/\S/);
    return;
  }
  const again = stripMetadata(result.bytes, kind);
  expect(again).toMatchObject({ kind: 'stripped', removed: [] });
  expect(again.kind === 'stripped' && again.bytes.equals(result.bytes)).toBe(true);
  expectNoMetadata(kind, result.bytes);
  // image-size skips the first segment after SOI unread, so it cannot measure a JPEG whose frame header
  // comes first (valid, and measureImage reads it): the comparison holds for every other output.
  const frameFirst = kind === 'jpeg' && result.bytes[3]! >= 0xc0 && result.bytes[3]! <= 0xcf;
  const before = sizeOf(input);
  if (before !== undefined && !frameFirst) expect(sizeOf(result.bytes)).toEqual(before);
  const measured = measureImage(input);
  if (measured.width !== 0) expect(measureImage(result.bytes)).toEqual(measured);
}

const jpegValid = jpegWithMetadata({ orientation: 6, extendedXmp: true });
const { segments: jpegSegments, sos } = jpegHeader(jpegValid);
const jpegPiece = fc.oneof(
  fc.constantFrom(...jpegSegments.map((segment) => jpegValid.subarray(segment.start, segment.end))),
  fc.constant(jpegValid.subarray(sos)), // the scan through EOI
  fc.constantFrom(
    Buffer.from([0xff]),
    Buffer.from([0xff, 0xd9]),
    Buffer.from('fffe0002', 'hex'), // an empty comment
    Buffer.from('ffe10008457869660000', 'hex'), // EXIF with nothing after its identifier
    jpegSegment(
      0xe1,
      Buffer.from(`Exif\0\0MM\0*\0\0\0\x08http://ns.adobe.com/xap/1.0/\0${XMP_PACKET}`, 'latin1'),
    ),
    jpegSegment(0xe1, Buffer.from(`http://ns.adobe.com/xap/1.0/\0Exif\0\0`, 'latin1')),
  ),
  fc
    .tuple(fc.integer({ min: 0xc0, max: 0xfe }), noise(40))
    .map(([marker, payload]) => jpegSegment(marker, payload)),
  fc
    .tuple(fc.nat({ max: 0xff }), fc.nat({ max: 0xffff }))
    .map(([marker, length]) => Buffer.from([0xff, marker, length >> 8, length & 0xff])),
  noise(16),
);
// Well-formed segments of any APPn/COM kind, payloads random or starting with a known identifier.
const identifier = fc.constantFrom(
  '',
  'Exif\0\0',
  'JFIF\0',
  'ICC_PROFILE\0',
  'MPF\0',
  'Adobe',
  'Photoshop 3.0\0',
  'http://ns.adobe.com/xap/1.0/\0',
);
const metadataSegment = fc
  .tuple(fc.constantFrom(0xe0, 0xe1, 0xe2, 0xec, 0xed, 0xee, 0xfe), identifier, noise(40))
  .map(([marker, id, payload]) => jpegSegment(marker, Buffer.concat([Buffer.from(id, 'latin1'), payload])));
const jpegTables = jpegSegments.filter(
  (segment) => !segment.type.startsWith('APP') && segment.type !== 'COM',
);
/** The valid image's tables, frame and scans with random metadata segments (duplicated, nested, empty) around. */
const jpegSkeleton = fc
  .tuple(
    fc.array(fc.oneof({ arbitrary: metadataSegment, weight: 6 }, { arbitrary: jpegPiece, weight: 1 }), {
      maxLength: 8,
    }),
    fc.array(metadataSegment, { maxLength: 4 }),
  )
  .map(([before, between]) =>
    Buffer.concat([
      Buffer.from([0xff, 0xd8]),
      ...before,
      ...jpegTables.map((segment) => jpegValid.subarray(segment.start, segment.end)),
      jpegValid.subarray(sos, -2),
      ...between,
      Buffer.from([0xff, 0xd9]),
    ]),
  );
const jpegInput = fc.oneof(
  { arbitrary: jpegSkeleton, weight: 3 },
  fc
    .array(jpegPiece, { maxLength: 16 })
    .map((pieces) => Buffer.concat([Buffer.from([0xff, 0xd8]), ...pieces])),
  mutated(jpegValid),
  noise(256).map((bytes) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), bytes])),
);

const pngValid = pngWithMetadata({ orientation: 3 });
const pngHead = pngValid.subarray(0, 8 + 25); // signature and IHDR
const letters = fc.stringMatching(/^[A-Za-z]{4}$/);
const pngPiece = fc.oneof(
  fc.constantFrom(...pngChunks(pngValid).map((chunk) => pngValid.subarray(chunk.start, chunk.end))),
  fc
    .tuple(fc.constantFrom('tEXt', 'iTXt', 'zTXt', 'eXIf', 'IDAT', 'IEND', 'acTL', 'fdAT'), noise(24))
    .map(([type, data]) => pngChunk(type, data)),
  letters.map((type) => pngChunk(type, Buffer.alloc(0))), // zero-length chunks
  fc
    .tuple(fc.nat(), letters)
    .map(([length, type]) =>
      Buffer.concat([
        Buffer.from([length >>> 24, length >> 16, length >> 8, length].map((b) => b & 0xff)),
        Buffer.from(type),
      ]),
    ),
  noise(16),
);
const pngMetadataChunk = fc
  .tuple(
    fc.constantFrom('tEXt', 'iTXt', 'zTXt', 'tIME', 'eXIf', 'gAMA', 'iCCP', 'prVW'),
    fc.oneof(noise(40), fc.constant(pngValid.subarray(0, 0))),
  )
  .map(([type, data]) => pngChunk(type, data));
const pngImage = pngChunks(pngValid).filter((chunk) => chunk.type === 'IDAT');
/** IHDR, IDAT and IEND in order with random well-formed chunks (metadata or not, empty or not) between. */
const pngSkeleton = fc
  .tuple(
    fc.array(fc.oneof({ arbitrary: pngMetadataChunk, weight: 6 }, { arbitrary: pngPiece, weight: 1 }), {
      maxLength: 6,
    }),
    fc.array(pngMetadataChunk, { maxLength: 4 }),
  )
  .map(([before, after]) =>
    Buffer.concat([
      pngHead,
      ...before,
      ...pngImage.map((chunk) => pngValid.subarray(chunk.start, chunk.end)),
      ...after,
      pngChunk('IEND', Buffer.alloc(0)),
    ]),
  );
const pngInput = fc.oneof(
  { arbitrary: pngSkeleton, weight: 3 },
  fc
    .array(pngPiece, { maxLength: 12 })
    .map((pieces) => Buffer.concat([makePng(1, 1).subarray(0, 8), ...pieces])),
  mutated(pngValid),
  noise(256).map((bytes) => Buffer.concat([makePng(1, 1).subarray(0, 8), bytes])),
);

const webpValid = webpWithMetadata({ orientation: 6, icc: Buffer.from('icc') });
const webpPiece = fc.oneof(
  fc.constantFrom(
    ...riffChunks(webpValid).map((chunk) =>
      webpValid.subarray(chunk.start, chunk.end + (chunk.data.length % 2)),
    ),
  ),
  fc
    .tuple(fc.constantFrom('EXIF', 'XMP ', 'ICCP', 'ANIM', 'VP8X', 'ALPH'), noise(24))
    .map(([type, data]) => riffChunk(type, data)),
  fc
    .tuple(fc.nat(), fc.constantFrom('EXIF', 'XMP ', 'VP8L'))
    .map(([size, type]) =>
      Buffer.concat([
        Buffer.from(type),
        Buffer.from([size, size >> 8, size >> 16, size >>> 24].map((b) => b & 0xff)),
      ]),
    ),
  noise(16),
);
const webpHead = riffChunks(webpValid).find((chunk) => chunk.type === 'VP8X')!;
const webpImage = riffChunks(webpValid).find((chunk) => chunk.type === 'VP8L')!;
/** VP8X, then random well-formed chunks around the image chunk, with the right RIFF size. */
const webpSkeleton = fc
  .tuple(
    fc.array(webpPiece, { maxLength: 4 }),
    fc.array(fc.tuple(fc.constantFrom('EXIF', 'XMP ', 'ICCP', 'UNKN'), noise(30)), { maxLength: 4 }),
  )
  .map(([before, after]) => {
    const body = Buffer.concat([
      webpValid.subarray(webpHead.start, webpHead.end),
      ...before,
      webpValid.subarray(webpImage.start, webpImage.end + (webpImage.data.length % 2)),
      ...after.map(([type, data]) => riffChunk(type, data)),
    ]);
    const header = Buffer.from('RIFF\0\0\0\0WEBP', 'latin1');
    header.writeUInt32LE(4 + body.length, 4);
    return Buffer.concat([header, body]);
  });
const webpInput = fc.oneof(
  { arbitrary: webpSkeleton, weight: 3 },
  fc
    .tuple(fc.boolean(), fc.array(webpPiece, { maxLength: 8 }), fc.option(fc.nat()))
    .map(([vp8x, pieces, size]) => {
      const first = vp8x ? [webpValid.subarray(webpHead.start, webpHead.end)] : [];
      const body = Buffer.concat([...first, ...pieces]);
      const header = Buffer.from('RIFF\0\0\0\0WEBP', 'latin1');
      header.writeUInt32LE(size === null ? 4 + body.length : size >>> 0, 4);
      return Buffer.concat([header, body]);
    }),
  mutated(webpValid),
);

const avifValid = avifWithMetadata({ orientation: 6 });
const avifInput = fc.oneof(
  mutated(avifValid),
  noise(256).map((bytes) => Buffer.concat([avifValid.subarray(0, 28), bytes])),
);

describe(`stripMetadata on arbitrary bytes (seed ${SEED})`, () => {
  it.each([
    ['jpeg', jpegInput],
    ['png', pngInput],
    ['webp', webpInput],
    ['avif', avifInput],
  ] as const)('%s: never throws, answers quickly, strips for good or refuses', (kind, input) => {
    fc.assert(
      fc.property(input, (bytes) => checkStrip(kind, bytes)),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });

  it('handles the untouched valid files too', () => {
    for (const [kind, bytes] of [
      ['jpeg', jpegValid],
      ['png', pngValid],
      ['webp', webpValid],
      ['avif', avifValid],
    ] as const) {
      checkStrip(kind, bytes);
      expect(stripMetadata(bytes, kind).kind).toBe('stripped');
    }
  });
});
