// JPEG stripping: EXIF (GPS included), XMP, IPTC and comments go; orientation, ICC and the scans stay.
import exifr from 'exifr';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { measureImage } from '#lib/files/measure.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { jpeg, jpegRotated, makeJpeg } from '#test/support/images.ts';
import {
  exifTiff,
  ICC_SEGMENT,
  jpegSegment,
  jpegWithMetadata,
  SECRET,
} from '#test/support/metadata-images.ts';
import { jpegHeader, jpegScans } from './readers.ts';

const ALL_METADATA = { gps: true, xmp: true, iptc: true, icc: false, tiff: true, exif: true } as const;

function stripped(bytes: Buffer): { bytes: Buffer; removed: string[] } {
  const result = stripMetadata(bytes, 'jpeg');
  if (result.kind !== 'stripped') throw new Error(`expected stripped, got ${result.kind}: ${result.reason}`);
  return result;
}

function app0(payload: Buffer): Buffer {
  return jpegSegment(0xe0, payload);
}

/** makeJpeg's bytes with `segments` inserted right after SOI (before its JFIF APP0). */
function withSegments(...segments: Buffer[]): Buffer {
  const base = makeJpeg(5, 3);
  return Buffer.concat([base.subarray(0, 2), ...segments, base.subarray(2)]);
}

describe('stripMetadata on a camera JPEG', () => {
  const original = jpegWithMetadata({ orientation: 6, extendedXmp: true });

  it('leaves no GPS, EXIF, XMP, IPTC or comment for an independent reader', async () => {
    // Prepare: the reader does find everything in the original
    const before = await exifr.parse(original, ALL_METADATA);
    expect(before.latitude).toBeCloseTo(48.8584);
    expect(before.CreatorTool).toBe(`${SECRET} Tool`);
    expect(before.Caption).toBe(`${SECRET} caption`);
    // Act
    const { bytes, removed } = stripped(original);
    // Assess
    const after = await exifr.parse(bytes, ALL_METADATA);
    expect(after).toEqual({ Orientation: 'Rotate 90 CW' });
    expect(await exifr.gps(bytes)).toBeUndefined();
    expect(bytes.includes(SECRET)).toBe(false);
    expect(jpegHeader(bytes).segments.map((segment) => segment.type)).not.toContain('COM');
    expect(removed).toEqual(['EXIF', 'XMP', 'extended XMP', 'APP13 Photoshop/IPTC', 'COM comment']);
  });

  it('keeps the orientation, so the picture still shows upright', async () => {
    const { bytes } = stripped(original);
    expect(await exifr.orientation(bytes)).toBe(6);
    expect(imageSize(bytes)).toMatchObject({ width: 5, height: 3, orientation: 6 });
    expect(measureImage(bytes)).toEqual({ width: 3, height: 5 });
  });

  it('keeps the scans byte for byte and the ICC profile', () => {
    const { bytes } = stripped(original);
    expect(jpegScans(bytes).equals(jpegScans(original))).toBe(true);
    expect(bytes.includes(ICC_SEGMENT)).toBe(true);
    const tables = (file: Buffer) =>
      jpegHeader(file)
        .segments.filter((segment) => !segment.type.startsWith('APP') && segment.type !== 'COM')
        .map((segment) => file.subarray(segment.start, segment.end).toString('hex'));
    expect(tables(bytes)).toEqual(tables(original));
  });

  it('is a no-op on its own output', () => {
    const once = stripped(original).bytes;
    const twice = stripped(once);
    expect(twice.bytes).toBe(once);
    expect(twice.removed).toEqual([]);
  });
});

describe('stripMetadata on JPEG orientation', () => {
  it.each([undefined, 1])('drops EXIF entirely when the orientation is %s', async (orientation) => {
    const { bytes } = stripped(jpegWithMetadata({ orientation }));
    expect(jpegHeader(bytes).segments.filter((segment) => segment.type === 'APP1')).toEqual([]);
    expect(await exifr.orientation(bytes)).toBeUndefined();
  });

  it.each([2, 3, 4, 5, 6, 7, 8])(
    'keeps orientation %i in a minimal APP1 of IFD0 only',
    async (orientation) => {
      const { bytes } = stripped(jpegWithMetadata({ orientation }));
      const app1 = jpegHeader(bytes).segments.filter((segment) => segment.type === 'APP1');
      expect(app1).toHaveLength(1);
      expect(app1[0]!.data.length).toBe(6 + 26);
      expect(await exifr.parse(bytes, ALL_METADATA)).toEqual({ Orientation: expect.any(String) });
      expect(await exifr.orientation(bytes)).toBe(orientation);
    },
  );

  it('takes the orientation of the first EXIF block and drops the others', async () => {
    const first = jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), exifTiff({ orientation: 8 })]));
    const second = jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), exifTiff({ orientation: 3 })]));
    const { bytes } = stripped(withSegments(first, second));
    expect(await exifr.orientation(bytes)).toBe(8);
    expect(jpegHeader(bytes).segments.filter((segment) => segment.type === 'APP1')).toHaveLength(1);
    expect(bytes.includes(SECRET)).toBe(false);
  });

  it('returns the very same bytes when only a minimal orientation is there', () => {
    const result = stripped(jpegRotated.bytes);
    expect(result.bytes).toBe(jpegRotated.bytes);
    expect(result.removed).toEqual([]);
  });
});

describe('stripMetadata on other JPEG segments', () => {
  it('returns the input itself when there is nothing to remove', () => {
    const result = stripped(jpeg.bytes);
    expect(result.bytes).toBe(jpeg.bytes);
    expect(result.removed).toEqual([]);
  });

  it('keeps Adobe APP14 (colour transform) and drops MPF, FlashPix and vendor APPn', () => {
    const adobe = jpegSegment(0xee, Buffer.from('Adobe\0\x64\0\0\0\0\x01', 'latin1'));
    const input = withSegments(
      adobe,
      jpegSegment(0xe2, Buffer.from(`MPF\0${SECRET}`, 'latin1')),
      jpegSegment(0xe2, Buffer.from(`FPXR\0${SECRET}`, 'latin1')),
      jpegSegment(0xec, Buffer.from(`Ducky\0${SECRET}`, 'latin1')),
      jpegSegment(0xe1, Buffer.from(`QVCI\0${SECRET}`, 'latin1')),
    );
    const { bytes, removed } = stripped(input);
    expect(bytes.includes(adobe)).toBe(true);
    expect(bytes.includes(SECRET)).toBe(false);
    expect(removed).toEqual(['APP2 MPF', 'APP2', 'APP12', 'APP1']);
  });

  it('removes a JFIF thumbnail but keeps the JFIF header', () => {
    const header = Buffer.from('JFIF\0\x01\x02\x00\x00\x01\x00\x01', 'latin1');
    const thumbnail = Buffer.concat([header, Buffer.from([1, 1]), Buffer.from('abc')]);
    const base = makeJpeg(5, 3);
    const input = Buffer.concat([base.subarray(0, 2), app0(thumbnail), base.subarray(20)]);
    const { bytes, removed } = stripped(input);
    expect(removed).toEqual(['JFIF thumbnail']);
    expect(jpegHeader(bytes).segments[0]!.data.equals(Buffer.concat([header, Buffer.from([0, 0])]))).toBe(
      true,
    );
  });

  it('drops metadata segments between scans and anything after EOI, and keeps the scans', () => {
    const base = makeJpeg(5, 3);
    const eoi = base.length - 2;
    const input = Buffer.concat([
      base.subarray(0, eoi),
      jpegSegment(0xfe, Buffer.from(`${SECRET} late comment`)),
      base.subarray(eoi),
      jpegWithMetadata(), // a second picture appended, as multi-picture files do: its EXIF has GPS
    ]);
    const { bytes, removed } = stripped(input);
    expect(bytes.equals(base)).toBe(true);
    expect(removed).toEqual(['COM comment', 'data after EOI']);
  });

  it('ends a JPEG whose scan runs to the end of the file with an EOI', () => {
    const base = makeJpeg(5, 3);
    const truncated = Buffer.concat([
      base.subarray(0, 2),
      jpegSegment(0xfe, Buffer.from(SECRET)),
      base.subarray(2, -2),
    ]);
    const { bytes, removed } = stripped(truncated);
    expect(bytes.equals(base)).toBe(true);
    expect(removed).toEqual(['COM comment']);
  });

  it('strips a JPEG-LS file, keeping its differently coded scans and nothing after its EOI', () => {
    const base = makeJpeg(5, 3);
    const sof = base.indexOf(Buffer.from([0xff, 0xc0]));
    const lossless = Buffer.concat([base, Buffer.from('after the end')]);
    lossless[sof + 1] = 0xf7;
    const input = Buffer.concat([
      lossless.subarray(0, 2),
      jpegSegment(0xfe, Buffer.from(SECRET)),
      lossless.subarray(2),
    ]);
    const { bytes, removed } = stripped(input);
    expect(bytes.equals(lossless.subarray(0, base.length))).toBe(true);
    expect(removed).toEqual(['COM comment', 'data after EOI']);
  });

  it('keeps fill bytes before a kept marker and returns the input when nothing goes', () => {
    const base = makeJpeg(5, 3);
    const input = Buffer.concat([base.subarray(0, 20), Buffer.from([0xff, 0xff]), base.subarray(20)]);
    expect(stripped(input).bytes).toBe(input);
  });
});

describe('stripMetadata refuses malformed JPEG containers', () => {
  const base = makeJpeg(5, 3);
  it.each([
    ['no SOI', Buffer.concat([Buffer.from([0, 0]), base.subarray(2)])],
    [
      'a segment length past the end',
      Buffer.concat([base.subarray(0, 2), Buffer.from([0xff, 0xe1, 0x7f, 0xff, 1, 2])]),
    ],
    ['a segment length of 0', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(4096)])],
    ['no scan', base.subarray(0, 100)],
    ['a scan before any frame header', withSegments(jpegSegment(0xda, Buffer.from([1, 1, 0, 0, 63, 0])))],
    [
      'garbage between segments',
      Buffer.concat([base.subarray(0, 20), Buffer.from('junk'), base.subarray(20)]),
    ],
    ['a frame header of the wrong length', withSegments(jpegSegment(0xc0, Buffer.from([8, 0, 3, 0, 5, 1])))],
    ['a marker with no length', Buffer.from([0xff, 0xd8, 0xff, 0xd9])],
  ])('%s', (_name, bytes) => {
    expect(stripMetadata(bytes, 'jpeg')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/^JPEG: /),
    });
  });
});
