// Who may ask for which rendition (docs/IMAGES.md "Presets and signatures"): anyone for a named preset
// (`?p=thumb`, `?p=thumb&f=auto`) or a preset's own query (`?w=480&q=75&f=webp`, the thumbnails of old
// records); any other combination only with the deployment's signature (`&s=`), which the API produces for
// a file's owner. So an anonymous client can make at most presets x PRESET_FORMATS renders per original.
import { createHmac } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { sameSecret } from '#lib/platform/crypto/same-secret.ts';
import {
  type FormatParam,
  type OutputFormat,
  parseRenditionQuery,
  pick,
  type RenditionLimits,
  type RenditionParams,
  renderableSourceOfKey,
} from './rendition-query.ts';

/** What `f` may be beside `p`: the preset's format, or AVIF or WebP (explicitly or as `auto`). */
export const PRESET_FORMATS = ['auto', 'webp', 'avif'] as const;

export type Presets = ReadonlyMap<string, RenditionParams & { format: Exclude<FormatParam, 'auto'> }>;

/** `images.presets` (name → query) parsed once against the limits; a preset without a fixed `f` is refused. */
export function presetsOf(queries: Readonly<Record<string, string>>, limits: RenditionLimits): Presets {
  return new Map(
    Object.entries(queries).map(([name, query]) => {
      const params = parseRenditionQuery(new URLSearchParams(query), limits);
      const { format } = params;
      if (format === undefined || format === 'auto')
        throw new Error(`images.presets.${name}: must name its format (f) other than auto`);
      return [name, { ...params, format }];
    }),
  );
}

/** The distinct stored renditions an anonymous client can force per original: each preset in each format. */
export function anonymousRenditionsPerOriginal(presets: Presets): number {
  let count = 0;
  for (const { format } of presets.values()) count += new Set([format, 'webp', 'avif']).size;
  return count;
}

/** A rendition query as asked: its parameters, what `f=auto` falls back to, and its signature if any. */
export interface AskedRendition {
  params: RenditionParams;
  /** A preset's format: what `f=auto` is for a viewer that takes neither AVIF nor WebP. */
  fallback?: OutputFormat;
  /** Present for a query that is no preset's: it must verify (verifyRendition). */
  signature?: string;
}

/** The parameters as a query: only the sizes and format asked, fit and quality always (what is signed). */
export function renditionQueryString(params: RenditionParams): string {
  const { width, height, fit, quality, format } = params;
  return [
    ...(width !== undefined ? [`w=${width}`] : []),
    ...(height !== undefined ? [`h=${height}`] : []),
    `fit=${fit}`,
    `q=${quality}`,
    ...(format !== undefined ? [`f=${format}`] : []),
  ].join('&');
}

const only = (query: URLSearchParams, name: string): string | undefined => {
  const values = query.getAll(name);
  if (values.length > 1) throw errors.badRequest(`${name}: is given more than once`, { parameter: name });
  return values[0];
};

/**
 * A preset (`p`, with at most `f` beside it), or other parameters: a preset's own query as is, any other
 * combination with its signature `s`. 400 names an unknown preset or a parameter a preset does not take;
 * 403 a missing signature.
 */
export function askedRendition(
  query: URLSearchParams,
  presets: Presets,
  limits: RenditionLimits,
): AskedRendition {
  const name = only(query, 'p');
  const signature = only(query, 's');
  const rest = new URLSearchParams([...query].filter(([key]) => key !== 'p' && key !== 's'));
  if (name !== undefined) {
    const preset = presets.get(name);
    if (!preset) {
      throw errors.badRequest(
        `p: there is no preset named ${name}; use one of ${[...presets.keys()].join(', ')}`,
        {
          parameter: 'p',
          allowed: [...presets.keys()],
        },
      );
    }
    const extra = [...rest.keys()].find((key) => key !== 'f');
    if (extra !== undefined)
      throw errors.badRequest(`${extra}: a preset (p) takes no other parameter than f`, { parameter: extra });
    const f = only(rest, 'f');
    const format = f === undefined ? preset.format : pick('f', f, [preset.format, ...PRESET_FORMATS]);
    return { params: { ...preset, format }, fallback: preset.format };
  }
  const params = parseRenditionQuery(rest, limits);
  const asked = renditionQueryString(params);
  for (const preset of presets.values()) if (renditionQueryString(preset) === asked) return { params };
  if (signature === undefined) {
    throw errors.forbidden(
      's: only presets (p) are served without a signature; the owner gets a signed URL from POST /api/v1/files/{id}/rendition-url',
    );
  }
  return { params, signature };
}

/** The signature of a rendition of `key`: HMAC-SHA256 of `<key>?<query>`, its first 16 bytes in base64url. */
export function renditionSignature(secret: string, key: string, params: RenditionParams): string {
  return createHmac('sha256', secret)
    .update(`${key}?${renditionQueryString(params)}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** 403 unless `signature` is this rendition's under one of the secrets (the current, or during a rotation the previous). */
export function verifyRendition(
  secrets: readonly string[],
  key: string,
  params: RenditionParams,
  signature: string,
): void {
  if (secrets.length === 0) throw errors.forbidden('s: signed renditions are not enabled on this deployment');
  const matches = secrets.map((secret) => sameSecret(signature, renditionSignature(secret, key, params)));
  if (!matches.includes(true)) throw errors.forbidden('s: the signature does not match this file and query');
}

/**
 * The signed URL of a rendition of `key`, its query checked against `images` (400 naming a parameter),
 * under the current secret (403 when the deployment has none).
 */
export function renditionUrlSigner(
  settings: Pick<AppConfig, 'base_url' | 'images'>,
  secrets: () => Promise<readonly string[]>,
): (key: string, query: URLSearchParams) => Promise<string> {
  const { widths, qualities } = settings.images;
  return async (key, query) => {
    const params = parseRenditionQuery(query, { widths, qualities });
    if (renderableSourceOfKey(key) === undefined)
      throw errors.unsupportedMediaType('file: this type cannot be rendered');
    const [secret] = await secrets();
    if (secret === undefined)
      throw errors.forbidden('s: signed renditions are not enabled on this deployment');
    const signature = renditionSignature(secret, key, params);
    return `${settings.base_url.replace(/\/+$/, '')}/i/${key}?${renditionQueryString(params)}&s=${signature}`;
  };
}
