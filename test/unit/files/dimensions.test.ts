// measureImage: the sizes image-size reported, read from a bounded head in bounded steps.
import fc from 'fast-check';
import { imageSize } from 'image-size';
import { describe, expect, it } from 'vitest';
import { MEASURE_HEAD_BYTES, measureImage } from '#lib/files/dimensions.ts';
import {
  images,
  makeAvifHeader,
  makeBmp,
  makeGif,
  makeIco,
  makeJpeg,
  makePng,
  makeWebp,
} from '#test/support/images.ts';
import {
  avifWithMetadata,
  jpegSegment,
  jpegWithMetadata,
  pngWithMetadata,
  webpWithMetadata,
} from '#test/support/metadata-images.ts';

const QUARTER_TURNS = [5, 6, 7, 8];

/** What image-size says people see: its width and height, swapped for a quarter-turn orientation. */
function imageSizeDisplayed(bytes: Buffer): { width: number; height: number } {
  const size = imageSize(new Uint8Array(bytes));
  const turned = QUARTER_TURNS.includes(size.orientation ?? 1);
  return turned ? { width: size.height, height: size.width } : { width: size.width, height: size.height };
}

/** makeJpeg's bytes with `segments` inserted after its JFIF APP0. */
function jpegWith(segments: Buffer[], width = 5, height = 3): Buffer {
  const base = makeJpeg(width, height);
  return Buffer.concat([base.subarray(0, 20), ...segments, base.subarray(20)]);
}

describe('measureImage agrees with image-size on valid images', () => {
  const sizes: Array<[number, number]> = [
    [1, 1],
    [3, 2],
    [17, 255],
    [256, 9],
  ];
  it.each(sizes)('%i x %i in every kind', (width, height) => {
    for (const bytes of [
      makePng(width, height),
      makeGif(width, height),
      makeJpeg(width, height),
      makeJpeg(width, height, 6),
      makeWebp(width, height),
      makeBmp(width, height),
      makeIco(Math.min(width, 255), Math.min(height, 255)),
      makeAvifHeader(width, height),
    ]) {
      expect(measureImage(bytes)).toEqual(imageSizeDisplayed(bytes));
    }
  });

  it('on every fixture and on images full of metadata', () => {
    for (const bytes of [
      ...Object.values(images).map((fixture) => fixture.bytes),
      jpegWithMetadata({ orientation: 6, extendedXmp: true }),
      pngWithMetadata(),
      webpWithMetadata({ width: 300, height: 20 }),
      avifWithMetadata({ width: 640, height: 480 }),
    ]) {
      expect(measureImage(bytes)).toEqual(imageSizeDisplayed(bytes));
    }
  });
});

describe('measureImage on JPEG', () => {
  it('reads the frame header behind hundreds of kilobytes of metadata', () => {
    const xmpExtension = jpegSegment(0xe1, Buffer.alloc(65_000, 0x41));
    const bytes = jpegWith(
      Array.from({ length: 10 }, () => xmpExtension),
      640,
      480,
    );
    expect(bytes.indexOf(Buffer.from([0xff, 0xc0]))).toBeGreaterThan(600_000);
    expect(measureImage(bytes)).toEqual({ width: 640, height: 480 });
  });

  it('is 0x0 when the frame header lies past the measured head', () => {
    const big = jpegSegment(0xe1, Buffer.alloc(65_000));
    const count = Math.ceil(MEASURE_HEAD_BYTES / 65_004);
    expect(measureImage(jpegWith(Array.from({ length: count }, () => big)))).toEqual({ width: 0, height: 0 });
  });

  it('is 0x0 past 256 segments before the frame header', () => {
    const empty = jpegSegment(0xfe, Buffer.alloc(0));
    expect(measureImage(jpegWith(Array.from({ length: 250 }, () => empty)))).toEqual({ width: 5, height: 3 });
    expect(measureImage(jpegWith(Array.from({ length: 300 }, () => empty)))).toEqual({ width: 0, height: 0 });
  });

  it('reads any frame type, and a frame header right after SOI', () => {
    const base = makeJpeg(7, 4);
    const sof = base.indexOf(Buffer.from([0xff, 0xc0]));
    for (const marker of [0xc1, 0xc2, 0xc3, 0xc9, 0xcb]) {
      const copy = Buffer.from(base);
      copy[sof + 1] = marker;
      expect(measureImage(copy)).toEqual({ width: 7, height: 4 });
    }
    const frameFirst = Buffer.concat([base.subarray(0, 2), base.subarray(sof)]);
    expect(measureImage(frameFirst)).toEqual({ width: 7, height: 4 });
  });

  it('takes the orientation of the first EXIF block, as browsers do', () => {
    const exif = (orientation: number) => makeJpeg(5, 3, orientation).subarray(20, 20 + 4 + 6 + 26);
    expect(measureImage(jpegWith([exif(6), exif(1)]))).toEqual({ width: 3, height: 5 });
    expect(measureImage(jpegWith([exif(1), exif(6)]))).toEqual({ width: 5, height: 3 });
  });

  it('is 0x0 for garbage after the signature', () => {
    for (const bytes of [
      Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), Buffer.alloc(1024)]),
      Buffer.concat([Buffer.from('ffd8', 'hex'), Buffer.alloc(1024, 0xff)]),
      Buffer.concat([Buffer.from('ffd8ffc00002', 'hex'), Buffer.alloc(8)]),
      Buffer.from('ffd8ffda0008010100003f00', 'hex'),
    ]) {
      expect(measureImage(bytes)).toEqual({ width: 0, height: 0 });
    }
  });
});

describe('measureImage on other containers', () => {
  it('ICO: the largest entry, 0 standing for 256', () => {
    const entry = (width: number, height: number) =>
      Buffer.from([width, height, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    const bytes = Buffer.concat([Buffer.from([0, 0, 1, 0, 3, 0]), entry(16, 16), entry(0, 0), entry(48, 48)]);
    expect(measureImage(bytes)).toEqual({ width: 256, height: 256 });
    expect(measureImage(bytes.subarray(0, 30))).toEqual({ width: 0, height: 0 });
  });

  it('AVIF: the largest ispe, and 0x0 when a box lies about its size', () => {
    const header = makeAvifHeader(6, 4);
    expect(measureImage(header)).toEqual({ width: 6, height: 4 });
    const lying = Buffer.from(header);
    lying.writeUInt32BE(0xffff, header.indexOf('meta') - 4);
    expect(measureImage(lying)).toEqual({ width: 0, height: 0 });
  });

  it('WebP: 0x0 for a VP8X with reserved bits set, as image-size refuses it', () => {
    const bytes = webpWithMetadata();
    const copy = Buffer.from(bytes);
    copy[20] = copy[20]! | 0x80;
    expect(measureImage(bytes)).toEqual({ width: 3, height: 2 });
    expect(measureImage(copy)).toEqual({ width: 0, height: 0 });
  });

  it('never reads past the view it is given', () => {
    const backing = Buffer.concat([makePng(9, 9), makeJpeg(9, 9), makeWebp(9, 9)]);
    const png = backing.subarray(0, 20);
    const jpeg = backing.subarray(makePng(9, 9).length, makePng(9, 9).length + 100);
    expect(measureImage(png)).toEqual({ width: 0, height: 0 });
    expect(measureImage(jpeg)).toEqual({ width: 0, height: 0 });
    expect(
      measureImage(backing.subarray(backing.length - makeWebp(9, 9).length, backing.length - 4)),
    ).toEqual({
      width: 9,
      height: 9,
    });
  });
});

describe('measureImage on arbitrary bytes', () => {
  const SEED = Number(process.env.METADATA_SEED ?? 20261121);
  const signatures = [
    ...Object.values(images).map((fixture) => fixture.bytes.subarray(0, 16)),
    Buffer.from('ffd8', 'hex'),
    Buffer.from('ffd8ffe1', 'hex'),
  ];

  it(`never throws and answers whole, non-negative sizes (seed ${SEED})`, () => {
    fc.assert(
      fc.property(fc.constantFrom(...signatures), fc.uint8Array({ maxLength: 512 }), (signature, rest) => {
        const { width, height } = measureImage(Buffer.concat([signature, rest]));
        expect(Number.isSafeInteger(width) && width >= 0 && Number.isSafeInteger(height) && height >= 0).toBe(
          true,
        );
        expect(width === 0).toBe(height === 0);
      }),
      { numRuns: 2000, seed: SEED },
    );
  });
});
