// WebP stripping: EXIF and XMP chunks go, VP8X flags and RIFF size follow; orientation, ICC and image stay.
// exifr does not read WebP, so the chunks are read here and the kept EXIF handed to exifr as TIFF.
import exifr from 'exifr';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { makeWebp, webp } from '#test/support/images.ts';
import { riff, riffChunk, SECRET, webpWithMetadata } from '#test/support/metadata-images.ts';
import { riffChunks } from './readers.ts';

const EXIF_FLAG = 0x08;
const XMP_FLAG = 0x04;
const ICC = Buffer.from('fake ICC profile bytes', 'latin1');

function stripped(bytes: Buffer): { bytes: Buffer; removed: string[] } {
  const result = stripMetadata(bytes, 'webp');
  if (result.kind !== 'stripped') throw new Error(`expected stripped, got ${result.kind}: ${result.reason}`);
  return result;
}

function chunk(bytes: Buffer, type: string): Buffer | undefined {
  return riffChunks(bytes).find((piece) => piece.type === type)?.data;
}

describe('stripMetadata on an extended WebP with metadata', () => {
  const original = webpWithMetadata({ orientation: 6, icc: ICC });

  it('drops XMP and all EXIF but the orientation, and says so in the VP8X flags', async () => {
    // Act
    const { bytes, removed } = stripped(original);
    // Assess
    expect(removed).toEqual(['EXIF', 'XMP']);
    expect(bytes.includes(SECRET)).toBe(false);
    expect(riffChunks(bytes).map((piece) => piece.type)).toEqual(['VP8X', 'ICCP', 'VP8L', 'EXIF']);
    const exif = chunk(bytes, 'EXIF')!;
    expect(await exifr.parse(exif, { gps: true, tiff: true, exif: true })).toEqual({
      Orientation: 'Rotate 90 CW',
    });
    const flags = chunk(bytes, 'VP8X')![0]!;
    expect(flags & EXIF_FLAG).toBe(EXIF_FLAG);
    expect(flags & XMP_FLAG).toBe(0);
    expect(flags & 0x30).toBe(0x30); // ICC and alpha untouched
  });

  it('keeps the image and ICC chunks byte for byte, with a right RIFF size', () => {
    const { bytes } = stripped(original);
    expect(chunk(bytes, 'VP8L')!.equals(chunk(original, 'VP8L')!)).toBe(true);
    expect(chunk(bytes, 'ICCP')!.equals(ICC)).toBe(true);
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    expect(imageSize(bytes)).toMatchObject({ width: 3, height: 2 });
  });

  it('is a no-op on its own output', () => {
    const once = stripped(original).bytes;
    const twice = stripped(once);
    expect(twice.bytes).toBe(once);
    expect(twice.removed).toEqual([]);
  });

  it('clears the EXIF flag when there is no orientation to keep', () => {
    const { bytes } = stripped(webpWithMetadata());
    expect(riffChunks(bytes).map((piece) => piece.type)).toEqual(['VP8X', 'VP8L']);
    expect(chunk(bytes, 'VP8X')![0]! & (EXIF_FLAG | XMP_FLAG)).toBe(0);
  });

  it('reads the orientation behind an "Exif\\0\\0" prefix too', async () => {
    const { bytes } = stripped(webpWithMetadata({ orientation: 8, exifPrefix: true }));
    expect(await exifr.orientation(chunk(bytes, 'EXIF')!)).toBe(8);
  });
});

describe('stripMetadata on other WebPs', () => {
  it('returns a simple (VP8L) WebP itself', () => {
    const result = stripped(webp.bytes);
    expect(result.bytes).toBe(webp.bytes);
    expect(result.removed).toEqual([]);
  });

  it('drops odd-sized metadata chunks with their padding and whatever follows the RIFF chunk', () => {
    const vp8l = makeWebp(3, 2).subarray(12);
    const input = Buffer.concat([
      riff([vp8l, riffChunk('XMP ', Buffer.from(`${SECRET}!`))]),
      Buffer.from(SECRET),
    ]);
    const { bytes, removed } = stripped(input);
    expect(bytes.equals(makeWebp(3, 2))).toBe(true);
    expect(removed).toEqual(['XMP', 'data after the RIFF chunk']);
  });
});

describe('stripMetadata refuses malformed WebP containers', () => {
  const base = webpWithMetadata();
  it.each([
    ['no RIFF header', Buffer.concat([Buffer.from('RIFX'), base.subarray(4)])],
    ['a RIFF size past the end', base.subarray(0, base.length - 4)],
    [
      'a chunk past the RIFF end',
      riff([makeWebp(3, 2).subarray(12), Buffer.from('EXIF\xff\0\0\0', 'latin1')]),
    ],
    [
      'a first chunk that is not an image header',
      riff([riffChunk('EXIF', Buffer.alloc(4)), makeWebp(3, 2).subarray(12)]),
    ],
    ['no image data', riff([riffChunk('VP8X', Buffer.alloc(10)), riffChunk('XMP ', Buffer.alloc(2))])],
    ['a truncated chunk header', riff([makeWebp(3, 2).subarray(12), Buffer.from('EXI')])],
  ])('%s', (_name, bytes) => {
    expect(stripMetadata(bytes, 'webp')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/^WebP: /),
    });
  });
});
