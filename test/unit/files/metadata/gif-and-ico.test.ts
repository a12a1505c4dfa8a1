// GIF and ICO (issue 29, finding 5): a GIF's XMP, comment and private extensions go, its loop count stays;
// an ICO's PNG entries are stripped as PNGs and its directory follows. Also PNG's unknown chunks, AVIF
// items behind a data reference and a JPEG without EOI, at the level of the bytes.
import { describe, expect, it } from 'vitest';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import type { ImageKind } from '#lib/files/metadata/types.ts';
import { makeGif, makeJpeg, makePng } from '#test/support/images.ts';
import {
  avifWithMetadata,
  gifWithMetadata,
  icoFirstImage,
  icoWithPngMetadata,
  jpegWithoutEoi,
  pngChunk,
  pngWithC2pa,
  SECRET,
  withDataReference,
} from '#test/support/metadata-images.ts';

function stripped(bytes: Buffer, kind: ImageKind): { bytes: Buffer; removed: string[] } {
  const result = stripMetadata(bytes, kind);
  if (result.kind !== 'stripped') throw new Error(`expected stripped, got ${result.kind}: ${result.reason}`);
  return result;
}

const LOOP = Buffer.from([0x21, 0xff, 11, ...Buffer.from('NETSCAPE2.0', 'latin1'), 3, 1, 0, 0, 0]);

describe('stripMetadata on a GIF', () => {
  it('drops XMP, comment and private extensions and what follows the trailer, keeping the loop and the image', () => {
    const { bytes, removed } = stripped(gifWithMetadata(4, 3), 'gif');
    const plain = makeGif(4, 3);
    // The plain GIF with only the loop extension inserted after its colour table.
    expect(bytes.equals(Buffer.concat([plain.subarray(0, 19), LOOP, plain.subarray(19)]))).toBe(true);
    expect(removed).toEqual(['XMP', 'comment', 'application extension', 'data after the trailer']);
    expect(bytes.includes(SECRET)).toBe(false);
  });

  it('gives a GIF without its trailer one, and is a no-op on its own output', () => {
    const plain = makeGif(3, 2);
    const { bytes } = stripped(plain.subarray(0, -1), 'gif');
    expect(bytes.equals(plain)).toBe(true);
    expect(stripped(bytes, 'gif').bytes).toBe(bytes);
  });

  it.each([
    ['a GIF that stops inside its image data', makeGif(3, 2).subarray(0, -3)],
    ['a GIF without an image', Buffer.concat([makeGif(3, 2).subarray(0, 19), Buffer.from([0x3b])])],
    ['an unknown block', Buffer.concat([makeGif(3, 2).subarray(0, 19), Buffer.from([0x42, 0x3b])])],
  ])('refuses %s', (_name, bytes) => {
    expect(stripMetadata(bytes, 'gif')).toMatchObject({ kind: 'refused' });
  });
});

describe('stripMetadata on an ICO', () => {
  it('strips its PNG entry and rewrites the entry size in the directory', () => {
    const input = icoWithPngMetadata(4, 3);
    const { bytes, removed } = stripped(input, 'ico');
    const png = icoFirstImage(bytes);
    expect(png.equals(stripped(icoFirstImage(input), 'png').bytes)).toBe(true);
    expect(bytes.readUInt32LE(14)).toBe(png.length);
    expect(bytes.readUInt32LE(18)).toBe(22);
    expect(bytes.length).toBe(22 + png.length);
    expect(removed).toContain('PNG eXIf');
    expect(bytes.includes(SECRET)).toBe(false);
  });

  it('refuses entries that overlap or lie outside the file', () => {
    const input = icoWithPngMetadata(4, 3);
    const outside = Buffer.from(input);
    outside.writeUInt32LE(input.length, 14);
    // Two entries naming the same bytes: copying each would multiply the file.
    const twice = Buffer.concat([
      Buffer.from([0, 0, 1, 0, 2, 0]),
      input.subarray(6, 22),
      input.subarray(6, 22),
      icoFirstImage(input),
    ]);
    twice.writeUInt32LE(38, 18);
    twice.writeUInt32LE(38, 34);
    expect(stripMetadata(outside, 'ico')).toMatchObject({ kind: 'refused' });
    expect(stripMetadata(twice, 'ico')).toMatchObject({ kind: 'refused', reason: 'ICO: images overlap' });
  });
});

describe('stripMetadata on the other hiding places', () => {
  it('drops a PNG caBX chunk and unknown ancillary chunks, and refuses an unknown critical chunk', () => {
    const { bytes, removed } = stripped(pngWithC2pa(4, 3), 'png');
    expect(bytes.equals(makePng(4, 3, [10, 200, 30]))).toBe(true);
    expect(removed).toEqual(['caBX (C2PA)', 'unknown ancillary chunk']);
    const base = makePng(2, 2);
    const critical = Buffer.concat([
      base.subarray(0, 33),
      pngChunk('GPSx', Buffer.from(SECRET)),
      base.subarray(33),
    ]);
    expect(stripMetadata(critical, 'png')).toMatchObject({ kind: 'refused' });
  });

  it('blanks AVIF metadata items that name another data reference', () => {
    const { bytes, removed } = stripped(withDataReference(avifWithMetadata()), 'avif');
    expect(removed).toEqual(['Exif item', 'XMP item']);
    expect(bytes.includes(SECRET)).toBe(false);
  });

  it('ends a JPEG without EOI after its scan, dropping a segment or an image that follows', () => {
    const plain = makeJpeg(5, 3);
    for (const after of ['segment', 'image'] as const) {
      const { bytes } = stripped(jpegWithoutEoi(after), 'jpeg');
      expect(bytes.equals(plain), after).toBe(true);
    }
  });
});
