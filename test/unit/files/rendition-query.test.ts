// The rendition query: what a viewer may ask for, the 400 naming the parameter at fault, the one spelling
// a stored rendition is kept under, and the output format (f=auto by the Accept header).
import { describe, expect, it } from 'vitest';
import { AppError } from '#lib/core/errors.ts';
import {
  acceptClassOf,
  canonicalQuery,
  clampToOriginal,
  decodeQueryPart,
  FITS,
  FORMAT_PARAMS,
  outputFormatsOf,
  PARAM_NAMES,
  parseRenditionQuery,
  RENDERABLE_SOURCES,
  type RenditionLimits,
  type RenditionParams,
  renderableSourceOfKey,
  renditionKeyOf,
  renditionPrefixOf,
  renditionQueryOf,
  THUMBNAIL_QUERY,
  thumbnailOf,
} from '#lib/files/rendition-query.ts';
import { watermarkVersion } from '#lib/files/watermark.ts';
import { DEFAULT_IMAGE_QUALITIES, DEFAULT_IMAGE_WIDTHS } from '#lib/platform/config/schema.ts';

const LIMITS: RenditionLimits = { widths: DEFAULT_IMAGE_WIDTHS, qualities: DEFAULT_IMAGE_QUALITIES };

function parse(query: string, limits = LIMITS) {
  return parseRenditionQuery(new URLSearchParams(query), limits);
}

/** The 400 a query is refused with (failing the test on any other outcome). */
function refusal(query: string): AppError {
  let caught: unknown;
  try {
    parse(query);
  } catch (error) {
    caught = error;
  }
  expect(caught, `${query} should be refused`).toBeInstanceOf(AppError);
  const error = caught as AppError;
  expect(error.errorName, query).toBe('bad_request');
  return error;
}

describe('parseRenditionQuery', () => {
  it('fills the defaults: fit inside, quality 75, sizes and format absent', () => {
    expect(parse('w=480')).toEqual({ width: 480, fit: 'inside', quality: 75 });
    expect(parse('h=320')).toEqual({ height: 320, fit: 'inside', quality: 75 });
    expect(parse('f=webp')).toEqual({ fit: 'inside', quality: 75, format: 'webp' });
  });

  it('reads every parameter', () => {
    expect(parse('w=640&h=480&fit=cover&q=90&f=avif')).toEqual({
      width: 640,
      height: 480,
      fit: 'cover',
      quality: 90,
      format: 'avif',
    });
    for (const fit of FITS) expect(parse(`fit=${fit}`).fit).toBe(fit);
    for (const format of FORMAT_PARAMS) expect(parse(`f=${format}`).format).toBe(format);
  });

  it('takes sizes and qualities from the deployment, not from a fixed list', () => {
    const limits = { widths: [100, 7000], qualities: [42] };
    expect(parse('w=7000&h=100&q=42', limits)).toMatchObject({ width: 7000, height: 100, quality: 42 });
    expect(() => parse('w=480', limits)).toThrow('w: must be one of 100, 7000');
    expect(() => parse('q=75', limits)).toThrow('q: must be one of 42');
  });

  it('refuses an unknown parameter, naming it and the known ones', () => {
    const error = refusal('w=480&width=480');
    expect(error.message).toBe('width: is not a rendition parameter; use w, h, fit, q, f');
    expect(error.data).toEqual({ parameter: 'width', allowed: [...PARAM_NAMES] });
  });

  it('refuses a repeated parameter, even with the same value', () => {
    expect(refusal('w=480&w=480').message).toBe('w: is given more than once');
    expect(refusal('fit=cover&q=75&fit=fill').message).toBe('fit: is given more than once');
  });

  it('refuses a value outside its set exactly as written', () => {
    const widths = DEFAULT_IMAGE_WIDTHS.join(', ');
    for (const [query, message] of [
      ['w=0480', `w: must be one of ${widths}`],
      ['w=481', `w: must be one of ${widths}`],
      ['w=480.0', `w: must be one of ${widths}`],
      ['w=', `w: must be one of ${widths}`],
      ['w=+480', `w: must be one of ${widths}`],
      ['h=-1', `h: must be one of ${widths}`],
      ['q=80', 'q: must be one of 50, 75, 90, 100'],
      ['fit=Cover', 'fit: must be one of inside, cover, contain, outside, fill'],
      ['fit=crop', 'fit: must be one of inside, cover, contain, outside, fill'],
      ['f=jpg', 'f: must be one of jpeg, png, webp, avif, auto'],
      ['f=gif', 'f: must be one of jpeg, png, webp, avif, auto'],
    ] as const) {
      const error = refusal(query);
      expect(error.message, query).toBe(message);
      expect(error.data, query).toMatchObject({ parameter: query.split('=')[0] });
    }
  });

  it('fuzzed: every query either parses or is a 400 whose message starts with the parameter at fault', () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % below;
    };
    const pickOf = <T>(items: readonly T[]): T => items[random(items.length)]!;
    const names = [...PARAM_NAMES, ...PARAM_NAMES, 'W', 'width', 'format', '', 'q ', 'f[]', '%', 'ü'];
    const values = [
      ...DEFAULT_IMAGE_WIDTHS.map(String),
      ...DEFAULT_IMAGE_QUALITIES.map(String),
      ...FITS,
      ...FORMAT_PARAMS,
      '',
      '0',
      '0480',
      '-16',
      '1e3',
      ' 480',
      'NaN',
      'auto ',
      '\u0000',
      'x'.repeat(300),
    ];
    let parsed = 0;
    let refused = 0;
    for (let round = 0; round < 400; round += 1) {
      const query = new URLSearchParams();
      for (let count = random(5); count > 0; count -= 1) query.append(pickOf(names), pickOf(values));
      try {
        const params = parseRenditionQuery(query, LIMITS);
        parsed += 1;
        // What parses is within the sets.
        if (params.width !== undefined) expect(DEFAULT_IMAGE_WIDTHS).toContain(params.width);
        if (params.height !== undefined) expect(DEFAULT_IMAGE_WIDTHS).toContain(params.height);
        expect(DEFAULT_IMAGE_QUALITIES).toContain(params.quality);
        expect(FITS).toContain(params.fit);
      } catch (error) {
        refused += 1;
        expect(error, query.toString()).toBeInstanceOf(AppError);
        const appError = error as AppError;
        expect(appError.errorName, query.toString()).toBe('bad_request');
        const { parameter } = appError.data as { parameter: string };
        expect([...query.keys()], query.toString()).toContain(parameter);
        expect(appError.message.startsWith(`${parameter}: `), appError.message).toBe(true);
      }
    }
    // Both outcomes were exercised.
    expect(parsed).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  });
});

describe('renditionQueryOf: the query as written, read', () => {
  it('decodes percent-encoded names and values, and + as a space, as the edge does (infra/edge.ts)', () => {
    const read = (raw: string) => [...renditionQueryOf(raw)];

    expect(read('%66=auto&w=480')).toEqual([
      ['f', 'auto'],
      ['w', '480'],
    ]);
    expect(parseRenditionQuery(renditionQueryOf('%66=%61uto&%77=480'), LIMITS)).toMatchObject({
      format: 'auto',
      width: 480,
    });
    expect(read('w+=c%20d&f&&=x&%70=a+b')).toEqual([
      ['f', ''],
      ['p', 'a b'],
    ]);
    // Any parameter that is no rendition's is dropped, as the edge drops it: empty asks for the original.
    expect(read('fbclid=x&v=2&utm_source=a&W=480')).toEqual([]);
    expect(read('v=2&p=thumb&s=abc')).toEqual([
      ['p', 'thumb'],
      ['s', 'abc'],
    ]);
    // Decoded once: `%2566` is the name `%66`, not f, so dropped.
    expect(read('%2566=auto')).toEqual([]);
  });

  it('keeps a part that is not percent-encoded UTF-8 as written', () => {
    expect(decodeQueryPart('%ZZ')).toBe('%ZZ');
    expect(decodeQueryPart('%C3')).toBe('%C3');
    expect(decodeQueryPart('%E2%9C%93+ok')).toBe('\u2713 ok');
  });
});

describe('canonicalQuery and the rendition key', () => {
  it('spells every rendition one way: defaults written out, parameters in a fixed order', () => {
    const one = canonicalQuery(parse('q=75&w=480'), 'webp');
    expect(one).toBe('w=480&h=0&fit=inside&q=75&f=webp');
    expect(canonicalQuery(parse('w=480'), 'webp')).toBe(one);
    expect(canonicalQuery(parse('fit=inside&w=480&q=75'), 'webp')).toBe(one);
    expect(canonicalQuery(parse('w=480&q=90'), 'webp')).not.toBe(one);
    expect(canonicalQuery(parse('w=480&fit=cover'), 'webp')).not.toBe(one);
  });

  it('writes f=auto as the format it resolved to', () => {
    const params = parse('w=480&f=auto');
    expect(canonicalQuery(params, 'avif')).toBe('w=480&h=0&fit=inside&q=75&f=avif');
    expect(canonicalQuery(params, 'avif')).toBe(canonicalQuery(parse('w=480&f=avif'), 'avif'));
    // PNG and GIF ignore q: every q is one stored copy.
    expect(canonicalQuery(parse('w=480&q=90&f=png'), 'png')).toBe('w=480&h=0&fit=inside&q=75&f=png');
    expect(canonicalQuery(parse('w=480&q=50'), 'gif')).toBe(canonicalQuery(parse('w=480'), 'gif'));
  });

  it("names a marked rendition by its mark's version: a changed mark is another stored copy", () => {
    const key = '2024/05/06/abc.jpg';
    const mark = { text: 'example.com', position: 'bottom-right', opacity: 0.6, min_size: 320 } as const;
    const plain = renditionKeyOf(key, parse('w=480'), 'webp');
    const marked = renditionKeyOf(key, parse('w=480'), 'webp', watermarkVersion(mark));
    const moved = renditionKeyOf(
      key,
      parse('w=480'),
      'webp',
      watermarkVersion({ ...mark, position: 'center' }),
    );
    expect(marked).toBe(`${plain}&wm=${watermarkVersion(mark)}`);
    expect(new Set([plain, marked, moved]).size).toBe(3);
    expect(watermarkVersion({ ...mark })).toBe(watermarkVersion(mark));
  });

  it('keeps renditions under derived/<key>/, the prefix deleted with the file', () => {
    const key = '2024/05/06/abc.jpg';
    const renditionKey = renditionKeyOf(key, parse('w=480'), 'jpeg');
    expect(renditionKey).toBe('derived/2024/05/06/abc.jpg/w=480&h=0&fit=inside&q=75&f=jpeg');
    expect(renditionKey.startsWith(renditionPrefixOf(key))).toBe(true);
    expect(
      renditionKeyOf('2024/05/06/abcd.jpg', parse('w=480'), 'jpeg').startsWith(renditionPrefixOf(key)),
    ).toBe(false);
  });
});

describe('outputFormatsOf', () => {
  it('uses f when it names a format, else the source format', () => {
    expect(outputFormatsOf({ format: 'png' }, 'jpeg', 'avif')).toEqual(['png']);
    expect(outputFormatsOf({}, 'gif', 'avif')).toEqual(['gif']);
    for (const source of RENDERABLE_SOURCES) expect(outputFormatsOf({}, source, 'other')).toEqual([source]);
  });

  it('resolves f=auto to the accepted modern formats and the source format, the smallest to be answered', () => {
    expect(outputFormatsOf({ format: 'auto' }, 'jpeg', 'avif,webp')).toEqual(['avif', 'webp', 'jpeg']);
    expect(outputFormatsOf({ format: 'auto' }, 'jpeg', 'avif')).toEqual(['avif', 'jpeg']);
    expect(outputFormatsOf({ format: 'auto' }, 'jpeg', 'webp')).toEqual(['webp', 'jpeg']);
    expect(outputFormatsOf({ format: 'auto' }, 'jpeg', 'other')).toEqual(['jpeg']);
    expect(outputFormatsOf({ format: 'auto' }, 'gif', 'other')).toEqual(['gif']);
    expect(canonicalQuery(parse('w=480&f=auto'), ['avif', 'webp', 'jpeg'])).toBe(
      'w=480&h=0&fit=inside&q=75&f=avif,webp,jpeg',
    );
  });

  it('classes Accept headers as browsers send them', () => {
    expect(acceptClassOf(undefined)).toBe('other');
    expect(acceptClassOf('*/*')).toBe('other');
    expect(acceptClassOf('image/avif,image/webp,image/apng,image/*,*/*;q=0.8')).toBe('avif,webp');
    expect(acceptClassOf('image/avif')).toBe('avif');
    expect(acceptClassOf('image/webp,*/*')).toBe('webp');
    expect(acceptClassOf('IMAGE/WEBP')).toBe('webp');
    expect(acceptClassOf('image/png,image/*;q=0.8')).toBe('other');
  });
});

describe('renderableSourceOfKey and thumbnailOf', () => {
  it('reads the source format from the extension, in any case; BMP and ICO are not renderable', () => {
    expect(renderableSourceOfKey('2024/05/06/a.jpg')).toBe('jpeg');
    expect(renderableSourceOfKey('2024/05/06/a.JPG')).toBe('jpeg');
    expect(renderableSourceOfKey('2024/05/06/a.jpeg')).toBe('jpeg');
    for (const format of ['png', 'gif', 'webp', 'avif'] as const) {
      expect(renderableSourceOfKey(`2024/05/06/a.${format}`)).toBe(format);
    }
    expect(renderableSourceOfKey('2024/05/06/a.bmp')).toBeUndefined();
    expect(renderableSourceOfKey('2024/05/06/a.ico')).toBeUndefined();
    expect(renderableSourceOfKey('2024/05/06/a.png.txt')).toBeUndefined();
    expect(renderableSourceOfKey('2024/05/06/a.tiff')).toBeUndefined();
  });

  it('gives the thumb preset URL, or null for what cannot be rendered', () => {
    expect(thumbnailOf('https://cdn.example.com', '2024/05/06/a.jpg')).toBe(
      'https://cdn.example.com/i/2024/05/06/a.jpg?p=thumb',
    );
    expect(thumbnailOf('https://cdn.example.com//', '2024/05/06/a.png')).toBe(
      'https://cdn.example.com/i/2024/05/06/a.png?p=thumb',
    );
    expect(thumbnailOf('https://cdn.example.com', '2024/05/06/a.bmp')).toBeNull();
    expect(thumbnailOf('https://cdn.example.com', '2024/05/06/a.ico')).toBeNull();
  });

  it('the thumbnail query parses, and is the canonical rendition of itself', () => {
    const params = parse(THUMBNAIL_QUERY);
    expect(params).toEqual({ width: 480, fit: 'inside', quality: 75, format: 'webp' });
    expect(canonicalQuery(params, outputFormatsOf(params, 'jpeg', 'other'))).toBe(
      'w=480&h=0&fit=inside&q=75&f=webp',
    );
  });
});

describe('clampToOriginal: a size at or over the original is the original size', () => {
  const original = { width: 300, height: 200 };
  const asked = (query: Partial<RenditionParams>): RenditionParams => ({
    fit: 'inside',
    quality: 75,
    format: 'webp',
    ...query,
  });
  const originalSize: RenditionParams = { fit: 'inside', quality: 75, format: 'webp' };

  it('clamps one side at or over the original for every fit but contain (which pads to it)', () => {
    expect(clampToOriginal(asked({ width: 1920, fit: 'contain' }), original)).toEqual(
      asked({ width: 1920, fit: 'contain' }),
    );
    for (const fit of ['inside', 'cover', 'outside', 'fill'] as const) {
      expect(clampToOriginal(asked({ width: 300, fit }), original)).toEqual(originalSize);
      expect(clampToOriginal(asked({ width: 3840, fit }), original)).toEqual(originalSize);
      expect(clampToOriginal(asked({ height: 200, fit }), original)).toEqual(originalSize);
    }
  });

  it('clamps a box covering the original only for inside and outside', () => {
    const box = { width: 1920, height: 1920 };
    expect(clampToOriginal(asked({ ...box, fit: 'inside' }), original)).toEqual(originalSize);
    expect(clampToOriginal(asked({ ...box, fit: 'outside' }), original)).toEqual(originalSize);
    for (const fit of ['cover', 'contain', 'fill'] as const) {
      expect(clampToOriginal(asked({ ...box, fit }), original)).toEqual(asked({ ...box, fit }));
    }
  });

  it('leaves a size under the original on either side, an unknown size and no size as asked', () => {
    expect(clampToOriginal(asked({ width: 256 }), original)).toEqual(asked({ width: 256 }));
    expect(clampToOriginal(asked({ width: 1920, height: 128 }), original)).toEqual(
      asked({ width: 1920, height: 128 }),
    );
    expect(clampToOriginal(asked({ width: 1920 }), { width: 0, height: 0 })).toEqual(asked({ width: 1920 }));
    expect(clampToOriginal(asked({}), original)).toEqual(asked({}));
  });

  it('keeps the quality and the format, or no format (the original own)', () => {
    expect(clampToOriginal({ width: 960, fit: 'inside', quality: 90 }, original)).toEqual({
      fit: 'inside',
      quality: 90,
    });
  });
});
