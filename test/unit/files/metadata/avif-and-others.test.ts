// AVIF: Exif and XMP items blanked in place; GIF, BMP and ICO left as they are, with the reason.
import exifr from 'exifr';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { avif, bmp, gif, ico } from '#test/support/images.ts';
import { AVIF_PIXELS, avifItemBytes, avifWithMetadata, SECRET } from '#test/support/metadata-images.ts';

function stripped(bytes: Buffer): { bytes: Buffer; removed: string[] } {
  const result = stripMetadata(bytes, 'avif');
  if (result.kind !== 'stripped') throw new Error(`expected stripped, got ${result.kind}: ${result.reason}`);
  return result;
}

describe('stripMetadata on an AVIF with Exif and XMP items', () => {
  const original = avifWithMetadata({ orientation: 6 });

  it('blanks the Exif item so no reader finds GPS or camera data', async () => {
    // Prepare: the reader finds GPS in the original
    expect((await exifr.gps(original))?.latitude).toBeCloseTo(48.8584);
    // Act
    const { bytes, removed } = stripped(original);
    // Assess
    expect(removed).toEqual(['Exif item', 'XMP item']);
    expect(await exifr.parse(bytes, { gps: true, tiff: true, exif: true, xmp: true })).toBeUndefined();
    expect(bytes.includes(SECRET)).toBe(false);
  });

  it('leaves valid, empty EXIF and XMP behind and every other byte as it was', () => {
    const { bytes } = stripped(original);
    expect(bytes.length).toBe(original.length);
    expect(avifItemBytes(bytes, 1).equals(AVIF_PIXELS)).toBe(true);
    const exif = avifItemBytes(bytes, 2);
    // TIFF offset 0, then a big-endian TIFF header whose IFD0 has no entry and no next IFD
    expect(exif.subarray(0, 18).toString('hex')).toBe('000000004d4d002a00000008000000000000');
    expect(exif.subarray(18).every((byte) => byte === 0)).toBe(true);
    const xmp = avifItemBytes(bytes, 3).toString('latin1');
    expect(xmp).toMatch(
      /^<\?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"\?><x:xmpmeta xmlns:x="adobe:ns:meta\/"\/> +<\?xpacket end="w"\?>$/,
    );
    const withoutMetadataItems = (file: Buffer) => {
      const copy = Buffer.from(file);
      avifItemBytes(copy, 2).fill(0);
      avifItemBytes(copy, 3).fill(0);
      return copy;
    };
    expect(withoutMetadataItems(bytes).equals(withoutMetadataItems(original))).toBe(true);
    expect(imageSize(bytes)).toMatchObject({ width: 6, height: 4 });
  });

  it('is a no-op on its own output', () => {
    const once = stripped(original).bytes;
    const twice = stripped(once);
    expect(twice.bytes).toBe(once);
    expect(twice.removed).toEqual([]);
  });

  it('returns an AVIF without metadata items itself', () => {
    const result = stripped(avif.bytes);
    expect(result.bytes).toBe(avif.bytes);
    expect(result.removed).toEqual([]);
  });

  it('refuses the low-overhead (mini) container, whose metadata it cannot remove', () => {
    const mini = Buffer.concat([avif.bytes.subarray(0, 28), Buffer.from('\0\0\0\x08mini', 'latin1')]);
    expect(stripMetadata(mini, 'avif')).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('mini'),
    });
  });

  function fileOffset(bytes: Buffer, id: number): number {
    return avifItemBytes(bytes, id).byteOffset - bytes.byteOffset;
  }

  /** The AVIF with item `id`'s single extent moved to `offset` (iloc v0 entries of 14 bytes, as built). */
  function movedItem(id: number, offset: (bytes: Buffer) => number): Buffer {
    const bytes = avifWithMetadata();
    const entries = bytes.indexOf('iloc', 0, 'latin1') + 4 + 4 + 2 + 2;
    bytes.writeUInt32BE(offset(bytes), entries + (id - 1) * 14 + 6);
    return bytes;
  }

  it.each([
    ['an Exif item over the image data', movedItem(2, (bytes) => fileOffset(bytes, 1)), /overlaps/],
    [
      'an Exif item over the boxes',
      movedItem(2, (bytes) => bytes.indexOf('iinf', 0, 'latin1')),
      /outside mdat/,
    ],
    ['an XMP item over the Exif item', movedItem(3, (bytes) => fileOffset(bytes, 2) + 4), /overlaps/],
  ] as const)('refuses to blank %s', (_name, bytes, reason) => {
    expect(stripMetadata(bytes, 'avif')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(reason),
    });
  });

  it.each([
    ['no ftyp first', Buffer.concat([Buffer.from('\0\0\0\x08free', 'latin1'), avif.bytes])],
    ['a box past the end', avif.bytes.subarray(0, avif.bytes.length - 1)],
    ['an item past the end', avifWithMetadata().subarray(0, -10)],
  ])('refuses %s', (_name, bytes) => {
    expect(stripMetadata(bytes, 'avif')).toMatchObject({ kind: 'refused' });
  });
});

describe('stripMetadata on formats it does not rewrite', () => {
  it('bmp is unchanged, with a reason to log', () => {
    const result = stripMetadata(bmp.bytes, 'bmp');
    expect(result).toMatchObject({ kind: 'unchanged', reason: expect.stringMatching(/is not rewritten/) });
  });

  it.each([
    ['gif', gif.bytes],
    ['ico', ico.bytes],
  ] as const)('a %s without metadata is kept byte for byte', (kind, bytes) => {
    expect(stripMetadata(bytes, kind)).toEqual({ kind: 'stripped', bytes, removed: [] });
  });
});
