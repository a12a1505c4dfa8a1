// PNG stripping: eXIf, tEXt, iTXt (XMP), zTXt and tIME go whole; pixels, colour, animation and CRCs stay.
import { crc32 } from 'node:zlib';
import exifr from 'exifr';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { makePng, png } from '#test/support/images.ts';
import { pngChunk, pngWithMetadata, SECRET } from '#test/support/metadata-images.ts';
import { idatData, pngChunks } from './readers.ts';

const ALL_METADATA = { gps: true, xmp: true, iptc: true, tiff: true, exif: true, ihdr: false } as const;

function stripped(bytes: Buffer): { bytes: Buffer; removed: string[] } {
  const result = stripMetadata(bytes, 'png');
  if (result.kind !== 'stripped') throw new Error(`expected stripped, got ${result.kind}: ${result.reason}`);
  return result;
}

/** makePng's bytes with `chunks` inserted after IHDR. */
function withChunks(...chunks: Buffer[]): Buffer {
  const base = makePng(4, 3);
  return Buffer.concat([base.subarray(0, 33), ...chunks, base.subarray(33)]);
}

describe('stripMetadata on a PNG with metadata', () => {
  const original = pngWithMetadata({ orientation: 6 });

  it('leaves no GPS, EXIF, XMP or text for an independent reader, and keeps the orientation', async () => {
    // Prepare: the reader finds it all in the original
    const before = await exifr.parse(original, { ...ALL_METADATA, ihdr: true });
    expect(before.latitude).toBeCloseTo(48.8584);
    expect(before.Comment).toBe(`${SECRET} text`);
    // Act
    const { bytes, removed } = stripped(original);
    // Assess
    expect(await exifr.parse(bytes, ALL_METADATA)).toEqual({ Orientation: 'Rotate 90 CW' });
    expect(await exifr.orientation(bytes)).toBe(6);
    expect(bytes.includes(SECRET)).toBe(false);
    expect(removed).toEqual(['eXIf', 'tEXt', 'iTXt', 'zTXt', 'tIME']);
    expect(pngChunks(bytes).map((chunk) => chunk.type)).toEqual([
      'IHDR',
      'gAMA',
      'pHYs',
      'eXIf',
      'IDAT',
      'IEND',
    ]);
  });

  it('keeps the pixel data, every CRC valid, and the size', () => {
    const { bytes } = stripped(original);
    expect(idatData(bytes).equals(idatData(original))).toBe(true);
    for (const chunk of pngChunks(bytes)) {
      expect(bytes.readUInt32BE(chunk.end - 4)).toBe(crc32(bytes.subarray(chunk.start + 4, chunk.end - 4)));
    }
    expect(imageSize(bytes)).toMatchObject({ width: 4, height: 3 });
  });

  it('is a no-op on its own output', () => {
    const once = stripped(original).bytes;
    const twice = stripped(once);
    expect(twice.bytes).toBe(once);
    expect(twice.removed).toEqual([]);
  });

  it('drops eXIf entirely when there is no orientation to keep', async () => {
    const { bytes } = stripped(pngWithMetadata());
    expect(pngChunks(bytes).map((chunk) => chunk.type)).not.toContain('eXIf');
    expect(await exifr.orientation(bytes)).toBeUndefined();
  });
});

describe('stripMetadata on other PNGs', () => {
  it('returns the input itself when there is nothing to remove', () => {
    const result = stripped(png.bytes);
    expect(result.bytes).toBe(png.bytes);
    expect(result.removed).toEqual([]);
  });

  it('keeps animation and colour chunks, and drops unknown ancillary ones', () => {
    const kept = [
      pngChunk('iCCP', Buffer.from('icc\0\0profile')),
      pngChunk('sRGB', Buffer.from([0])),
      pngChunk('cHRM', Buffer.alloc(32, 1)),
      pngChunk('acTL', Buffer.from([0, 0, 0, 1, 0, 0, 0, 0])),
      pngChunk('fcTL', Buffer.alloc(26)),
    ];
    const input = withChunks(
      ...kept,
      pngChunk('vpAg', Buffer.alloc(9)),
      pngChunk('tEXt', Buffer.from(`Title\0${SECRET}`)),
    );
    const { bytes, removed } = stripped(input);
    expect(removed).toEqual(['unknown ancillary chunk', 'tEXt']);
    expect(bytes.equals(withChunks(...kept))).toBe(true);
  });

  it('drops the draft EXIF chunk names and zero-length metadata chunks', () => {
    const input = withChunks(
      pngChunk('exIf', Buffer.from(SECRET)),
      pngChunk('zxIf', Buffer.alloc(0)),
      pngChunk('tEXt', Buffer.alloc(0)),
    );
    const { bytes, removed } = stripped(input);
    expect(removed).toEqual(['exIf', 'zxIf', 'tEXt']);
    expect(bytes.equals(makePng(4, 3))).toBe(true);
  });

  it('drops whatever follows IEND', () => {
    const { bytes, removed } = stripped(Buffer.concat([png.bytes, Buffer.from(SECRET)]));
    expect(bytes.equals(png.bytes)).toBe(true);
    expect(removed).toEqual(['data after IEND']);
  });
});

describe('stripMetadata refuses malformed PNG containers', () => {
  const base = makePng(4, 3);
  const iend = base.length - 12;
  it.each([
    ['no signature', Buffer.concat([Buffer.from('not png!'), base.subarray(8)])],
    ['no IEND', base.subarray(0, iend)],
    ['a truncated chunk', base.subarray(0, base.length - 3)],
    [
      'a chunk length past the end',
      Buffer.concat([base.subarray(0, 33), Buffer.from([0, 0, 0x10, 0, 0x74, 0x45, 0x58, 0x74])]),
    ],
    [
      'a first chunk other than IHDR',
      Buffer.concat([base.subarray(0, 8), pngChunk('tEXt', Buffer.alloc(0)), base.subarray(8)]),
    ],
    ['no IDAT', Buffer.concat([base.subarray(0, 33), base.subarray(iend)])],
    ['a chunk type that is not letters', withChunks(pngChunk('t3Xt', Buffer.alloc(0)))],
    ['random bytes after the signature', Buffer.concat([base.subarray(0, 8), Buffer.alloc(64, 0x5a)])],
  ])('%s', (_name, bytes) => {
    expect(stripMetadata(bytes, 'png')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/^PNG: /),
    });
  });
});
