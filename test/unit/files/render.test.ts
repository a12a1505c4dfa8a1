// The renderer on real images: every answer is decoded again with sharp to check what a viewer would get
// (size, format, orientation, alpha, frames, colour, no metadata), and hostile inputs are refused with
// 415 or 422 before they cost anything, never with another error.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { AppError } from '#lib/core/errors.ts';
import { measureImage } from '#lib/files/measure.ts';
import { type RenderLimits, renderRendition } from '#lib/files/render.ts';
import {
  clampToOriginal,
  FITS,
  type OutputFormat,
  type RenderableSource,
  type RenditionParams,
} from '#lib/files/rendition-query.ts';
import {
  animatedGif,
  animatedWebp,
  cmykJpeg,
  decompressionBombPng,
  displayP3Jpeg,
  FRAME_DELAY_MS,
  gifWithManyFrames,
  hugeDimensionsHeader,
  jpegWithOrientation6AndGps,
  makeBmp,
  makeGif,
  makeIco,
  notAnImage,
  photoAvif,
  photoJpeg,
  photoWebp,
  png16Bit,
  pngWithAlpha,
  polyglot,
  truncated,
} from '#test/support/images.ts';
import { SECRET } from '#test/support/metadata-images.ts';

const LIMITS: RenderLimits = { maxInputPixels: 50_000_000, maxFrames: 1000, avifMaxPixels: 8_294_400 };

function ask(params: Partial<RenditionParams> = {}): RenditionParams {
  return { fit: 'inside', quality: 75, ...params };
}

/** What sharp reads back from a rendition, every frame of it. */
async function decode(body: Buffer) {
  const meta = await sharp(body, { animated: true }).metadata();
  return { ...meta, frameHeight: meta.pageHeight ?? meta.height };
}

/** The RGBA of pixel (x, y) of the first frame. */
async function pixel(body: Buffer, x: number, y: number): Promise<[number, number, number, number]> {
  const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * 4;
  return [data[at]!, data[at + 1]!, data[at + 2]!, data[at + 3]!];
}

/** The AppError a render is refused with (failing the test on any other outcome). */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, 'the render should have been refused').toBeInstanceOf(AppError);
  return error as AppError;
}

/** sharp names AVIF output `heif` (with AV1 compression). */
function sharpFormatOf(output: OutputFormat): string {
  return output === 'avif' ? 'heif' : output;
}

const STILL_OUTPUTS = ['jpeg', 'png', 'webp', 'avif'] as const;

describe('renderRendition: size, format and fit', () => {
  it('writes each output format at the asked width, with the real dimensions in the answer', async () => {
    const source = await photoJpeg(640, 480);
    for (const output of STILL_OUTPUTS) {
      const rendered = await renderRendition(source, 'jpeg', ask({ width: 320 }), output, LIMITS);
      const read = await decode(rendered.body);
      expect(read.format, output).toBe(sharpFormatOf(output));
      expect([read.width, read.height], output).toEqual([320, 240]);
      expect(rendered).toMatchObject({ format: output, width: 320, height: 240 });
      expect(rendered.contentType).toBe(`image/${output}`);
    }
  });

  it('reads WebP and AVIF sources as well', async () => {
    for (const [source, format] of [
      [await photoWebp(200, 100), 'webp'],
      [await photoAvif(200, 100), 'avif'],
    ] as const) {
      const rendered = await renderRendition(source, format, ask({ width: 100 }), 'jpeg', LIMITS);
      expect([rendered.width, rendered.height], format).toEqual([100, 50]);
      expect((await decode(rendered.body)).format).toBe('jpeg');
    }
  });

  it('never enlarges: a box over the original gives the original size', async () => {
    const source = await photoJpeg(640, 480);
    for (const params of [
      { width: 3840 },
      { height: 1080 },
      { width: 1920, height: 1920, fit: 'cover' as const },
    ]) {
      const rendered = await renderRendition(source, 'jpeg', ask(params), 'webp', LIMITS);
      const read = await decode(rendered.body);
      expect([read.width, read.height], JSON.stringify(params)).toEqual([640, 480]);
    }
  });

  it('fits a 4:3 original into a 320x320 box as each fit says', async () => {
    const source = await photoJpeg(640, 480);
    const expected = {
      inside: [320, 240],
      cover: [320, 320],
      contain: [320, 320],
      outside: [427, 320],
      fill: [320, 320],
    } as const;
    for (const [fit, size] of Object.entries(expected)) {
      const rendered = await renderRendition(
        source,
        'jpeg',
        ask({ width: 320, height: 320, fit: fit as RenditionParams['fit'] }),
        'png',
        LIMITS,
      );
      const read = await decode(rendered.body);
      expect([read.width, read.height], fit).toEqual(size);
    }
  });

  it('keeps the proportions with one side given, and the size with none', async () => {
    const source = await photoJpeg(640, 480);
    const byHeight = await renderRendition(source, 'jpeg', ask({ height: 120 }), 'jpeg', LIMITS);
    expect([byHeight.width, byHeight.height]).toEqual([160, 120]);
    const asIs = await renderRendition(source, 'jpeg', ask(), 'webp', LIMITS);
    expect([asIs.width, asIs.height]).toEqual([640, 480]);
  });

  it('spends q on the lossy formats and ignores it for PNG', async () => {
    const source = await photoJpeg(320, 240);
    for (const output of ['jpeg', 'webp', 'avif'] as const) {
      const low = await renderRendition(source, 'jpeg', ask({ quality: 50 }), output, LIMITS);
      const high = await renderRendition(source, 'jpeg', ask({ quality: 90 }), output, LIMITS);
      expect(low.body.length, output).toBeLessThan(high.body.length);
    }
    const low = await renderRendition(source, 'jpeg', ask({ quality: 50 }), 'png', LIMITS);
    const high = await renderRendition(source, 'jpeg', ask({ quality: 90 }), 'png', LIMITS);
    expect(low.body.equals(high.body)).toBe(true);
  });
});

describe('renderRendition: orientation and metadata', () => {
  it('the fixture: stored 60x40 with orientation 6, a GPS block and XMP', async () => {
    const source = await jpegWithOrientation6AndGps(60, 40);
    const meta = await sharp(source).metadata();
    expect([meta.width, meta.height, meta.orientation]).toEqual([60, 40, 6]);
    expect(meta.exif?.includes(Buffer.from([0x88, 0x25])), 'GPS IFD pointer').toBe(true);
    expect(meta.exif?.includes(Buffer.from('N\0', 'latin1')), 'GPSLatitudeRef').toBe(true);
    expect(meta.xmp).toBeDefined();
    expect(source.includes(SECRET)).toBe(true);
  });

  it('applies the orientation before resizing: w is the displayed width, the picture upright', async () => {
    const source = await jpegWithOrientation6AndGps(60, 40);
    for (const output of STILL_OUTPUTS) {
      const rendered = await renderRendition(source, 'jpeg', ask({ width: 20 }), output, LIMITS);
      const read = await decode(rendered.body);
      // Portrait: 40 wide x 60 high as shown, scaled to 20 wide.
      expect([read.width, read.height], output).toEqual([20, 30]);
      expect(read.orientation ?? 1, output).toBe(1);
      // The stored top band (red) is on the right once turned 90 degrees clockwise.
      const [rightR, , rightB] = await pixel(rendered.body, 19, 15);
      const [leftR, , leftB] = await pixel(rendered.body, 0, 15);
      expect(rightR, `${output}: right is red`).toBeGreaterThan(200);
      expect(rightB, `${output}: right is red`).toBeLessThan(60);
      expect(leftB, `${output}: left is blue`).toBeGreaterThan(200);
      expect(leftR, `${output}: left is blue`).toBeLessThan(60);
    }
    const unsized = await renderRendition(source, 'jpeg', ask(), 'png', LIMITS);
    expect([unsized.width, unsized.height]).toEqual([40, 60]);
  });

  it('writes no EXIF, GPS, XMP or ICC profile', async () => {
    const sources: Array<[Buffer, RenderableSource]> = [
      [await jpegWithOrientation6AndGps(60, 40), 'jpeg'],
      [await displayP3Jpeg(16, 16), 'jpeg'],
    ];
    for (const [source, format] of sources) {
      for (const output of STILL_OUTPUTS) {
        const rendered = await renderRendition(source, format, ask({ width: 16 }), output, LIMITS);
        const read = await decode(rendered.body);
        expect(read.exif, output).toBeUndefined();
        expect(read.xmp, output).toBeUndefined();
        expect(read.hasProfile, output).toBe(false);
        expect(rendered.body.includes(SECRET), output).toBe(false);
        expect(rendered.body.includes('GPS'), output).toBe(false);
      }
    }
  });
});

describe('renderRendition: colour', () => {
  it('converts Display P3 through its profile to sRGB', async () => {
    const source = await displayP3Jpeg(16, 16);
    const [storedR, storedG] = await pixel(await sharp(source, { ignoreIcc: true }).png().toBuffer(), 8, 8);
    expect(storedR).toBeLessThan(245); // the fixture really holds P3 values
    expect(storedG).toBeGreaterThan(35);
    for (const output of ['png', 'jpeg'] as const) {
      const rendered = await renderRendition(source, 'jpeg', ask(), output, LIMITS);
      const [r, g, b] = await pixel(rendered.body, 8, 8);
      expect(r, output).toBeGreaterThan(245);
      expect(g, output).toBeLessThan(20);
      expect(b, output).toBeLessThan(20);
    }
  });

  it('writes CMYK and 16-bit sources as 8-bit sRGB', async () => {
    const cmyk = await renderRendition(await cmykJpeg(16, 16), 'jpeg', ask(), 'jpeg', LIMITS);
    const cmykRead = await decode(cmyk.body);
    expect([cmykRead.space, cmykRead.channels]).toEqual(['srgb', 3]);
    const [r, g, b] = await pixel(cmyk.body, 8, 8);
    expect(r).toBeGreaterThan(200);
    expect(Math.max(g, b)).toBeLessThan(60);

    const deep = await renderRendition(await png16Bit(16, 16), 'png', ask(), 'png', LIMITS);
    const deepRead = await decode(deep.body);
    expect([deepRead.space, deepRead.depth, deepRead.bitsPerSample]).toEqual(['srgb', 'uchar', 8]);
  });
});

describe('renderRendition: alpha', () => {
  it('keeps alpha in PNG, WebP and AVIF, and flattens onto white in JPEG', async () => {
    const source = await pngWithAlpha(40, 20);
    for (const output of ['png', 'webp', 'avif'] as const) {
      const rendered = await renderRendition(source, 'png', ask(), output, LIMITS);
      expect((await decode(rendered.body)).hasAlpha, output).toBe(true);
      expect((await pixel(rendered.body, 35, 10))[3], `${output}: right half transparent`).toBeLessThan(10);
      expect((await pixel(rendered.body, 5, 10))[3], `${output}: left half opaque`).toBeGreaterThan(245);
    }
    const jpeg = await renderRendition(source, 'png', ask(), 'jpeg', LIMITS);
    const read = await decode(jpeg.body);
    expect([read.hasAlpha, read.channels]).toEqual([false, 3]);
    const [r, g, b] = await pixel(jpeg.body, 35, 10);
    expect(Math.min(r, g, b), 'transparent became white').toBeGreaterThan(240);
  });

  it('pads contain with transparency where the format has alpha, with white in JPEG', async () => {
    for (const [source, format] of [
      [await pngWithAlpha(40, 20), 'png'],
      [await photoJpeg(40, 20), 'jpeg'],
    ] as const) {
      const params = ask({ width: 40, height: 40, fit: 'contain' });
      const png = await renderRendition(source, format, params, 'png', LIMITS);
      expect([png.width, png.height]).toEqual([40, 40]);
      expect((await pixel(png.body, 5, 2))[3], `${format} -> png: padding`).toBe(0);
      expect((await pixel(png.body, 5, 20))[3], `${format} -> png: picture`).toBe(255);
      const jpeg = await renderRendition(source, format, params, 'jpeg', LIMITS);
      const [r, g, b] = await pixel(jpeg.body, 5, 2);
      expect(Math.min(r, g, b), `${format} -> jpeg: padding`).toBeGreaterThan(240);
    }
  });
});

describe('renderRendition: animation', () => {
  it('keeps every frame, its delay and the transparency for GIF and WebP outputs', async () => {
    for (const [source, format] of [
      [await animatedGif(40, 30, 3), 'gif'],
      [await animatedWebp(40, 30, 3), 'webp'],
    ] as const) {
      for (const output of ['gif', 'webp'] as const) {
        const label = `${format} -> ${output}`;
        const rendered = await renderRendition(source, format, ask({ width: 20 }), output, LIMITS);
        const read = await decode(rendered.body);
        expect(read.format, label).toBe(output);
        expect([read.pages, read.width, read.frameHeight], label).toEqual([3, 20, 15]);
        expect([rendered.width, rendered.height], label).toEqual([20, 15]);
        expect(read.delay, label).toEqual([FRAME_DELAY_MS, FRAME_DELAY_MS, FRAME_DELAY_MS]);
        expect(read.loop, label).toBe(0);
        // (lossy WebP leaves the odd unit of alpha)
        expect((await pixel(rendered.body, 1, 1))[3], `${label}: transparent corner`).toBeLessThan(8);
      }
    }
  });

  it('takes the first frame for JPEG, PNG and AVIF', async () => {
    for (const [source, format] of [
      [await animatedGif(40, 30, 3), 'gif'],
      [await animatedWebp(40, 30, 3), 'webp'],
    ] as const) {
      for (const output of ['jpeg', 'png', 'avif'] as const) {
        const label = `${format} -> ${output}`;
        const rendered = await renderRendition(source, format, ask({ width: 20 }), output, LIMITS);
        const read = await decode(rendered.body);
        expect(read.pages ?? 1, label).toBe(1);
        expect([read.width, read.height], label).toEqual([20, 15]);
        const [r, g, b] = await pixel(rendered.body, 15, 10);
        expect(r, `${label}: the first frame is red`).toBeGreaterThan(200);
        expect(Math.max(g, b), `${label}: the first frame is red`).toBeLessThan(60);
      }
    }
  });

  it('renders a still GIF as a still GIF', async () => {
    const rendered = await renderRendition(makeGif(8, 6), 'gif', ask({ width: 4 }), 'gif', LIMITS);
    const read = await decode(rendered.body);
    expect([read.format, read.pages ?? 1, read.width, read.height]).toEqual(['gif', 1, 4, 3]);
  });
});

describe('renderRendition: limits (422 before decoding)', () => {
  it('refuses a decompression bomb by its header, naming the pixels', async () => {
    const bomb = await decompressionBombPng();
    expect(bomb.length).toBeLessThan(100_000);
    const error = await refusal(renderRendition(bomb, 'png', ask({ width: 16 }), 'webp', LIMITS));
    expect(error.errorName).toBe('unprocessable');
    expect(error.message).toBe('image: 400000000 pixels is over the limit of 50000000');
  });

  it('refuses headers claiming 65535 x 65535 (PNG) and 65500 x 65500 (JPEG)', async () => {
    for (const [format, pixels] of [
      ['png', 65535 * 65535],
      ['jpeg', 65500 * 65500],
    ] as const) {
      const error = await refusal(
        renderRendition(hugeDimensionsHeader(format), format, ask({ width: 16 }), 'jpeg', LIMITS),
      );
      expect(error.errorName, format).toBe('unprocessable');
      expect(error.message, format).toBe(`image: ${pixels} pixels is over the limit of 50000000`);
    }
  });

  it('counts every frame of an animation kept as one, and one frame of a still taken from it', async () => {
    const source = await animatedGif(100, 100, 10); // 10,000 pixels a frame
    const tight = { ...LIMITS, maxInputPixels: 50_000 };
    const error = await refusal(renderRendition(source, 'gif', ask(), 'webp', tight));
    expect(error.errorName).toBe('unprocessable');
    expect(error.message).toBe('image: 100000 pixels is over the limit of 50000');
    const still = await renderRendition(source, 'gif', ask(), 'png', tight);
    expect([still.width, still.height]).toEqual([100, 100]);
  });

  it('refuses an animation of 5,000 frames as an animation, and renders its first frame as a still', async () => {
    const source = gifWithManyFrames(5000);
    expect(source.length).toBeLessThan(150_000);
    for (const output of ['gif', 'webp'] as const) {
      const error = await refusal(renderRendition(source, 'gif', ask({ width: 16 }), output, LIMITS));
      expect(error.errorName, output).toBe('unprocessable');
      expect(error.message, output).toBe('image: 5000 frames is over the limit of 1000');
    }
    for (const output of ['jpeg', 'png'] as const) {
      const rendered = await renderRendition(source, 'gif', ask({ width: 16 }), output, LIMITS);
      const read = await decode(rendered.body);
      expect([read.pages ?? 1, read.width, read.height], output).toEqual([1, 1, 1]);
    }
  });
});

describe('renderRendition: unreadable bytes (415)', () => {
  it('refuses a truncated file of each format rather than render what was read', async () => {
    const sources: Array<[Buffer, RenderableSource]> = [
      [await photoJpeg(200, 150), 'jpeg'],
      [await pngWithAlpha(200, 150), 'png'],
      [await photoWebp(200, 150), 'webp'],
      [await photoAvif(200, 150), 'avif'],
      [await animatedGif(40, 30, 3), 'gif'],
    ];
    for (const [bytes, format] of sources) {
      for (const fraction of [0.5, 0.95]) {
        const label = `${format} cut at ${fraction}`;
        const output = format === 'gif' ? 'gif' : 'png';
        const error = await refusal(
          renderRendition(truncated(bytes, fraction), format, ask(), output, LIMITS),
        );
        expect(error.errorName, label).toBe('unsupported_media_type');
        expect(error.message, label).toBe(`image: the bytes are not a readable image/${format} image`);
      }
    }
  });

  it('refuses bytes of another format than the key says, naming what they are', async () => {
    const cases: Array<[Buffer, RenderableSource, string]> = [
      [polyglot(), 'png', 'image: the bytes are a gif image, not image/png'],
      [await photoWebp(20, 10), 'jpeg', 'image: the bytes are a webp image, not image/jpeg'],
      [await photoJpeg(20, 10), 'avif', 'image: the bytes are a jpeg image, not image/avif'],
    ];
    for (const [bytes, claimed, message] of cases) {
      const error = await refusal(renderRendition(bytes, claimed, ask(), 'png', LIMITS));
      expect(error.errorName, message).toBe('unsupported_media_type');
      expect(error.message).toBe(message);
    }
    // The polyglot under its real format is a plain GIF.
    const asGif = await renderRendition(polyglot(), 'gif', ask(), 'png', LIMITS);
    expect([asGif.width, asGif.height]).toEqual([4, 3]);
  });

  it('refuses what sharp cannot or must not read: BMP, ICO, SVG, text, nothing', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    for (const [name, bytes] of [
      ['bmp', makeBmp(3, 2)],
      ['ico', makeIco(2, 2)],
      ['svg', svg],
      ['text', notAnImage],
      ['empty', Buffer.alloc(0)],
    ] as const) {
      const error = await refusal(renderRendition(bytes, 'png', ask({ width: 16 }), 'png', LIMITS));
      expect(error.errorName, name).toBe('unsupported_media_type');
      expect(error.message, name).toMatch(/^image: the bytes are .*image\/png/);
    }
  });

  it('answers damaged files with a rendition, 415 or 422, never another error', async () => {
    const sources: Array<[Buffer, RenderableSource]> = [
      [await photoJpeg(64, 48), 'jpeg'],
      [await pngWithAlpha(64, 48), 'png'],
      [await photoWebp(64, 48), 'webp'],
      [await animatedGif(32, 24, 3), 'gif'],
      [await photoAvif(64, 48), 'avif'],
    ];
    let seed = 42;
    const random = (below: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % below;
    };
    const outcomes = new Set<string>();
    for (const [bytes, format] of sources) {
      for (let round = 0; round < 12; round += 1) {
        const damaged = Buffer.from(bytes);
        for (let flips = 1 + random(8); flips > 0; flips -= 1) damaged[random(damaged.length)] = random(256);
        try {
          await renderRendition(
            damaged,
            format,
            ask({ width: 32 }),
            format === 'gif' ? 'gif' : 'webp',
            LIMITS,
          );
          outcomes.add('rendered');
        } catch (error) {
          expect(error, `${format} round ${round}`).toBeInstanceOf(AppError);
          expect(['unsupported_media_type', 'unprocessable']).toContain((error as AppError).errorName);
          outcomes.add((error as AppError).errorName);
        }
      }
    }
    expect(outcomes.has('unsupported_media_type')).toBe(true);
  });
});

describe('renderRendition: AVIF bounded in pixels', () => {
  it('scales an AVIF rendition down to images.avif_max_pixels, proportions kept; other formats as asked', async () => {
    const source = await photoJpeg(640, 480);
    const limits = { ...LIMITS, avifMaxPixels: 10_000 };

    const avif = await renderRendition(source, 'jpeg', ask(), 'avif', limits);
    const boxed = await renderRendition(
      source,
      'jpeg',
      ask({ width: 320, height: 320, fit: 'cover' }),
      'avif',
      limits,
    );
    const small = await renderRendition(source, 'jpeg', ask({ width: 96 }), 'avif', limits);
    const webp = await renderRendition(source, 'jpeg', ask(), 'webp', limits);

    // 640 x 480 is 307,200 pixels: scaled by the square root of 10,000 / 307,200.
    expect([avif.width, avif.height]).toEqual([115, 86]);
    expect(await decode(avif.body)).toMatchObject({ format: 'heif', width: 115, height: 86 });
    // The cover crop is kept and shrunk: a square, at most 10,000 pixels.
    expect([boxed.width, boxed.height]).toEqual([100, 100]);
    // Under the bound: as asked.
    expect([small.width, small.height]).toEqual([96, 72]);
    expect([webp.width, webp.height]).toEqual([640, 480]);
  });
});

describe('clampToOriginal against the renderer', () => {
  it('gives, for every fit and size, the very pixels the size asked gives (never enlarged, oriented)', async () => {
    const sources = [await photoJpeg(90, 60), await jpegWithOrientation6AndGps(90, 60)];
    const sizes = [[1920], [90], [undefined, 1920], [1920, 1920], [1920, 32], [48, 1920], [48, 32], [48]];
    for (const source of sources) {
      for (const fit of FITS) {
        for (const [width, height] of sizes) {
          const asked = ask({ fit, ...(width ? { width } : {}), ...(height ? { height } : {}) });
          const clamped = clampToOriginal(asked, measureImage(source));
          const [a, b] = await Promise.all(
            [asked, clamped].map((params) => renderRendition(source, 'jpeg', params, 'png', LIMITS)),
          );
          expect(b!.body.equals(a!.body), `${fit} ${width}x${height}`).toBe(true);
        }
      }
    }
  });
});
