// measureImage: image-size's width and height read from a bounded head, as people see the image.
import { describe, expect, it } from 'vitest';
import { HEIF_HEAD_BYTES, MEASURE_HEAD_BYTES, measureImage } from '#lib/files/measure.ts';
import { images, makeAvifHeader, makeJpeg, notAnImage } from '#test/support/images.ts';
import {
  avifWithMetadata,
  jpegSegment,
  jpegWithMetadata,
  pngWithMetadata,
  webpWithMetadata,
} from '#test/support/metadata-images.ts';

/** makeJpeg's bytes with `segments` inserted after its JFIF APP0. */
function jpegWith(segments: Buffer[], width = 5, height = 3): Buffer {
  const base = makeJpeg(width, height);
  return Buffer.concat([base.subarray(0, 20), ...segments, base.subarray(20)]);
}

describe('measureImage', () => {
  it('measures every accepted kind, from the fixtures and the images full of metadata', () => {
    for (const fixture of Object.values(images)) {
      expect(measureImage(fixture.bytes), fixture.mime).toEqual({
        width: fixture.width,
        height: fixture.height,
      });
    }
    expect(measureImage(jpegWithMetadata({ orientation: 1, extendedXmp: true }))).not.toEqual({
      width: 0,
      height: 0,
    });
    expect(measureImage(pngWithMetadata())).not.toEqual({ width: 0, height: 0 });
    expect(measureImage(webpWithMetadata({ width: 300, height: 20 }))).toEqual({ width: 300, height: 20 });
    expect(measureImage(avifWithMetadata({ width: 640, height: 480 }))).toEqual({ width: 640, height: 480 });
    expect(measureImage(makeAvifHeader(17, 255))).toEqual({ width: 17, height: 255 });
  });

  it('reports the displayed size of a JPEG turned a quarter by its EXIF orientation', () => {
    expect(measureImage(makeJpeg(640, 480, 6))).toEqual({ width: 480, height: 640 });
    expect(measureImage(makeJpeg(640, 480, 3))).toEqual({ width: 640, height: 480 });
  });

  it('reads a JPEG frame header behind hundreds of kilobytes of metadata, not one beyond its head', () => {
    const xmpExtension = jpegSegment(0xe1, Buffer.alloc(65_000, 0x41));
    const near = jpegWith(
      Array.from({ length: 10 }, () => xmpExtension),
      640,
      480,
    );
    const far = jpegWith(
      Array.from({ length: Math.ceil(MEASURE_HEAD_BYTES / 65_000) + 1 }, () => xmpExtension),
      640,
      480,
    );

    expect(measureImage(near)).toEqual({ width: 640, height: 480 });
    expect(measureImage(far)).toEqual({ width: 0, height: 0 });
  });

  it('reads an AVIF size within its head, not one whose meta box lies beyond it', () => {
    const header = makeAvifHeader(64, 32);
    const late = Buffer.concat([
      header.subarray(0, header.readUInt32BE(0)), // ftyp
      Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('free'), Buffer.alloc(HEIF_HEAD_BYTES)]),
      header.subarray(header.readUInt32BE(0)),
    ]);
    late.writeUInt32BE(HEIF_HEAD_BYTES + 8, header.readUInt32BE(0));

    expect(measureImage(header)).toEqual({ width: 64, height: 32 });
    expect(measureImage(late)).toEqual({ width: 0, height: 0 });
  });

  it('answers 0/0 for what it cannot measure, and never throws', () => {
    for (const bytes of [
      Buffer.alloc(0),
      notAnImage,
      images.png.bytes.subarray(0, 20),
      images.jpeg.bytes.subarray(0, 30),
      Buffer.from('RIFF\0\0\0\0WEBPVP8X', 'latin1'),
    ]) {
      expect(measureImage(bytes)).toEqual({ width: 0, height: 0 });
    }
  });
});
