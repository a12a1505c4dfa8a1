// The query of a rendition, `/i/<key>?w=&h=&fit=&q=&f=` (docs/IMAGES.md): parsed against the deployment's
// bounded sets, normalized into one canonical form, and the output format it resolves to. Pure, free of
// sharp, so the render function checks a query before it reads anything.
import { errors } from '#lib/core/errors.ts';
import { DERIVED_PREFIX } from './prefixes.ts';

// Where stored renditions live: defined import-free in lib/files/prefixes.ts, so the stack grants the
// render function exactly this prefix.
export { DERIVED_PREFIX };

export const FITS = ['inside', 'cover', 'contain', 'outside', 'fill'] as const;
export type Fit = (typeof FITS)[number];

/** What `f` may name. */
export const FORMAT_PARAMS = ['jpeg', 'png', 'webp', 'avif', 'auto'] as const;
export type FormatParam = (typeof FORMAT_PARAMS)[number];

/** What a rendition can be written as: the explicit formats, and GIF for a GIF kept in its own format. */
export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';

/** Formats the renderer reads; any other source (BMP, ICO) is 415. */
export const RENDERABLE_SOURCES = ['jpeg', 'png', 'gif', 'webp', 'avif'] as const;
export type RenderableSource = (typeof RENDERABLE_SOURCES)[number];

export const PARAM_NAMES = ['w', 'h', 'fit', 'q', 'f'] as const;
export type ParamName = (typeof PARAM_NAMES)[number];

/** Every parameter of a rendition URL, in the order the edge writes them: a preset, the above, a signature. */
export const RENDITION_PARAMS = ['p', ...PARAM_NAMES, 's'] as const;

export const DEFAULT_FIT: Fit = 'inside';
export const DEFAULT_QUALITY = 75;

/** A rendition as asked, normalized: absent sizes stay absent, fit and quality take their defaults. */
export interface RenditionParams {
  width?: number;
  height?: number;
  fit: Fit;
  quality: number;
  /** Absent: the original's format. */
  format?: FormatParam;
}

export interface RenditionLimits {
  /** `images.widths`: the sizes `w` and `h` may name. */
  widths: readonly number[];
  /** `images.qualities`: the values `q` may name. */
  qualities: readonly number[];
}

/** What the viewer accepts, as far as `f=auto` cares; the CDN keys its cache by this class. */
export type AcceptClass = 'avif,webp' | 'avif' | 'webp' | 'other';

// One rule for the render function and the CDN's viewer-request function (infra/edge.ts embeds these
// sources), so the class the edge keys its cache by is the class the function renders.
export const ACCEPTS_AVIF = /image\/avif/i;
export const ACCEPTS_WEBP = /image\/webp/i;

/** The modern formats `accept` names, comma-joined (`avif,webp`), else `other`. Self-contained (infra/edge.ts). */
export function acceptClassOf(accept: string | undefined): AcceptClass {
  const avif = accept !== undefined && ACCEPTS_AVIF.test(accept);
  const webp = accept !== undefined && ACCEPTS_WEBP.test(accept);
  return (avif ? (webp ? 'avif,webp' : 'avif') : webp ? 'webp' : 'other') as AcceptClass;
}

/**
 * One name or value of a query as written, read: `+` is a space and percent-escapes are decoded, so `%66`
 * is `f`; a part that is not percent-encoded UTF-8 stays as written. The one reading of a rendition's query:
 * the render function's (renditionQueryOf) and the CDN's viewer-request function's, which embeds this
 * source (infra/edge.ts), so the edge keys its cache by the very parameters the function renders.
 */
export function decodeQueryPart(part: string): string {
  const spaced = part.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch (_notEncoded) {
    return spaced;
  }
}

/**
 * A raw query string (`w=480&%66=auto`) as its names and values read by decodeQueryPart, every parameter
 * that is not a rendition's (`v`, `fbclid`) dropped, as the edge drops it: empty, it asks for the original.
 */
export function renditionQueryOf(raw: string): URLSearchParams {
  const query = new URLSearchParams();
  for (const part of raw.split('&')) {
    const at = part.indexOf('=');
    const name = decodeQueryPart(at < 0 ? part : part.slice(0, at));
    if ((RENDITION_PARAMS as readonly string[]).includes(name))
      query.append(name, decodeQueryPart(at < 0 ? '' : part.slice(at + 1)));
  }
  return query;
}

/** `name: must be one of a, b, c`: the 400 every bad parameter answers with. */
function mustBeOneOf(name: string, allowed: readonly (string | number)[]): never {
  throw errors.badRequest(`${name}: must be one of ${allowed.join(', ')}`, {
    parameter: name,
    allowed: [...allowed],
  });
}

export function pick<T extends string | number>(name: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((candidate) => String(candidate) === value);
  if (found === undefined) mustBeOneOf(name, allowed);
  return found;
}

/**
 * The parameters of a rendition query, or a 400 naming the parameter at fault: an unknown name, a repeated
 * one, or a value outside its set (exactly as written: `w=0480` is not `w=480`). An empty query is not a
 * rendition; the caller serves the original.
 */
export function parseRenditionQuery(query: URLSearchParams, limits: RenditionLimits): RenditionParams {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!(PARAM_NAMES as readonly string[]).includes(name)) {
      throw errors.badRequest(`${name}: is not a rendition parameter; use ${PARAM_NAMES.join(', ')}`, {
        parameter: name,
        allowed: [...PARAM_NAMES],
      });
    }
    if (seen.has(name)) {
      throw errors.badRequest(`${name}: is given more than once`, { parameter: name });
    }
    seen.add(name);
  }
  const value = (name: ParamName) => query.get(name) ?? undefined;
  const w = value('w');
  const h = value('h');
  const fit = value('fit');
  const q = value('q');
  const f = value('f');
  return {
    ...(w !== undefined ? { width: pick('w', w, limits.widths) } : {}),
    ...(h !== undefined ? { height: pick('h', h, limits.widths) } : {}),
    fit: fit !== undefined ? pick('fit', fit, FITS) : DEFAULT_FIT,
    quality: q !== undefined ? pick('q', q, limits.qualities) : DEFAULT_QUALITY,
    ...(f !== undefined ? { format: pick('f', f, FORMAT_PARAMS) } : {}),
  };
}

/** Outputs that ignore `q`: their canonical form writes the default, so one stored copy. */
const LOSSLESS: ReadonlySet<OutputFormat> = new Set(['png', 'gif']);

/**
 * The one spelling of a rendition: every parameter in a fixed order with its default filled in, so
 * `?q=75&w=480` and `?w=480` name the same stored rendition. `f=auto` resolves to formats, each stored
 * under its own name (several, `f=avif,webp`, name the choice among them, never stored); PNG and GIF,
 * which ignore `q`, with the default one. A watermark's version is written last (`wm=`): a changed mark
 * is another stored copy.
 */
export function canonicalQuery(
  params: RenditionParams,
  outputs: OutputFormat | readonly OutputFormat[],
  watermark?: string,
): string {
  const formats = typeof outputs === 'string' ? [outputs] : outputs;
  const lossless = formats.length === 1 && LOSSLESS.has(formats[0]!);
  return [
    `w=${params.width ?? 0}`,
    `h=${params.height ?? 0}`,
    `fit=${params.fit}`,
    `q=${lossless ? DEFAULT_QUALITY : params.quality}`,
    `f=${formats.join(',')}`,
    ...(watermark ? [`wm=${watermark}`] : []),
  ].join('&');
}

/**
 * The formats a rendition may be written in, of which the smallest is answered: `f` itself; for `auto`
 * each modern format the viewer accepts and the fallback (a preset's format, or the source's); without
 * `f` the source's.
 */
export function outputFormatsOf(
  params: Pick<RenditionParams, 'format'>,
  source: RenderableSource,
  accept: AcceptClass,
  fallback: OutputFormat = source,
): OutputFormat[] {
  const { format } = params;
  if (format === undefined) return [source];
  if (format !== 'auto') return [format];
  const accepted = accept === 'other' ? [] : (accept.split(',') as OutputFormat[]);
  return [...new Set([...accepted, fallback])];
}

/**
 * The encoder's quality for `q` (a perceived quality), tuned so the formats look alike at one `q`
 * (docs/IMAGES.md "f=auto"): AVIF reaches at two thirds of `q` what WebP and JPEG reach at `q`.
 */
export function autoQualityOf(output: OutputFormat, quality: number): number {
  return output === 'avif' ? Math.round((quality * 2) / 3) : quality;
}

export const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  gif: 'image/gif',
};

/** The source format of a record key from its extension (`.jpg` is JPEG), or undefined: not renderable. */
export function renderableSourceOfKey(key: string): RenderableSource | undefined {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  const format = ext === 'jpg' ? 'jpeg' : ext;
  return (RENDERABLE_SOURCES as readonly string[]).includes(format)
    ? (format as RenderableSource)
    : undefined;
}

/** Where the rendition of `key` with these parameters (and watermark version) is stored. */
export function renditionKeyOf(
  key: string,
  params: RenditionParams,
  outputs: OutputFormat | readonly OutputFormat[],
  watermark?: string,
): string {
  return `${DERIVED_PREFIX}${key}/${canonicalQuery(params, outputs, watermark)}`;
}

/**
 * The parameters giving the same pixels for an original of `size` (as displayed; 0/0 unknown): a size at or
 * over the original's becomes the original's own (no `w`, no `h`), since a render never enlarges
 * (`withoutEnlargement`), so every such request is one stored copy (docs/IMAGES.md). `contain` never is:
 * it pads to the size asked, even one side of it. With both sides asked, only `inside` and `outside` keep
 * the original's shape (`cover` and `fill` crop or stretch to the box). The renderer's own test holds each
 * clamp to the same pixels as the size asked (test/unit/files/render.test.ts).
 */
export function clampToOriginal(
  params: RenditionParams,
  size: { width: number; height: number },
): RenditionParams {
  const { width, height, fit, quality, format } = params;
  if (size.width === 0 || (width === undefined && height === undefined)) return params;
  const oneSide = width === undefined || height === undefined;
  const covers = (width ?? 0) >= size.width || width === undefined;
  const coversHeight = (height ?? 0) >= size.height || height === undefined;
  if (!covers || !coversHeight || fit === 'contain' || !(oneSide || fit === 'inside' || fit === 'outside'))
    return params;
  return { fit: 'inside', quality, ...(format !== undefined ? { format } : {}) };
}

/** The prefix holding every rendition of `key` (deleted with the file). */
export function renditionPrefixOf(key: string): string {
  return `${DERIVED_PREFIX}${key}/`;
}

/** The `thumb` preset's own query: the thumbnail URL of older records, still served unsigned. */
export const THUMBNAIL_QUERY = 'w=480&q=75&f=webp';

/** The record's `thumbnail`: the `thumb` preset's URL, or null for a source the renderer cannot read (BMP, ICO). */
export function thumbnailOf(baseUrl: string, key: string): string | null {
  if (renderableSourceOfKey(key) === undefined) return null;
  return `${baseUrl.replace(/\/+$/, '')}/i/${key}?p=thumb`;
}
